package script

type bigquery struct{}

func (l *bigquery) render(g *gen) {}

type snowflake struct{}

func (l *snowflake) render(g *gen) {}

type sparkJob struct{}

func (l *sparkJob) render(g *gen) {}
