module github.com/incrc/incrc

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0
	github.com/rogpeppe/go-internal v1.16.0
	github.com/spf13/pflag v1.1.0
	go.yaml.in/yaml/v3 v3.0.6
)

require golang.org/x/tools v0.52.0 // indirect
