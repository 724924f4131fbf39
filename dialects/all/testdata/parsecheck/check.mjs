// Reads [{dialect, where, sql}, ...] as JSON on stdin, parses every
// statement with the real parser for its dialect, prints one line per
// statement a parser rejects, and exits 1 if there is any (2 on bad input).
//
//   spark, spark_iceberg  dt-sql-parser SparkSQL (Spark's own ANTLR grammar)
//   trino                 dt-sql-parser TrinoSQL (Trino's own ANTLR grammar)
//   bigquery              sql-parser-cst, dialect bigquery, ? parameters
//   snowflake, redshift   datafusion-sqlparser-rs (WASM), its Snowflake and
//                         Redshift dialects
//   procedure             sql-parser-cst, dialect postgresql: a CREATE
//                         PROCEDURE (scripts; the body is a string to it)
import { register } from 'node:module';

register('./hook.mjs', import.meta.url);

const { SparkSQL, TrinoSQL } = await import('dt-sql-parser');
const cst = await import('sql-parser-cst');
const sqlparser = await import('@guanmingchiu/sqlparser-ts');
await sqlparser.init();

const spark = new SparkSQL();
const trino = new TrinoSQL();

// Each returns a list of error messages, empty when the statement parses.
const parsers = {
  spark: (sql) => spark.validate(sql).map(errorText),
  spark_iceberg: (sql) => spark.validate(sql).map(errorText),
  trino: (sql) => trino.validate(sql).map(errorText),
  bigquery: (sql) => thrown(() => cst.parse(sql, { dialect: 'bigquery', paramTypes: ['?'] })),
  snowflake: (sql) => thrown(() => sqlparser.validate(sql, 'snowflake')),
  redshift: (sql) => thrown(() => sqlparser.validate(sql, 'redshift')),
  procedure: (sql) => thrown(() => cst.parse(sql, { dialect: 'postgresql' })),
};

function errorText(e) {
  return `line ${e.startLine}:${e.startColumn}: ${e.message}`;
}

function thrown(fn) {
  try {
    fn();
    return [];
  } catch (e) {
    return [String(e && e.message ? e.message : e).split('\n').slice(0, 4).join(' | ')];
  }
}

let input = '';
for await (const chunk of process.stdin) input += chunk;
let stmts;
try {
  stmts = JSON.parse(input);
} catch (e) {
  console.error(`parsecheck: input is not JSON: ${e.message}`);
  process.exit(2);
}

let failed = 0;
const counts = {};
for (const { dialect, where, sql } of stmts) {
  const parse = parsers[dialect];
  if (!parse) {
    console.error(`parsecheck: no parser for dialect ${JSON.stringify(dialect)}`);
    process.exit(2);
  }
  counts[dialect] = (counts[dialect] || 0) + 1;
  const errors = parse(sql);
  if (errors.length > 0) {
    failed++;
    console.log(`FAIL ${dialect} ${where}: ${errors.join('; ')}`);
  }
}
console.log(`parsed ${stmts.length} statements (${Object.entries(counts).map(([d, n]) => `${d} ${n}`).join(', ')}), ${failed} rejected`);
process.exit(failed > 0 ? 1 : 0);
