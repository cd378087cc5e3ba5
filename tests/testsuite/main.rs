//! The integration tests, one binary (one link, one process): a module per area. Helpers live in
//! `support` (temporary projects and git repositories, running the real `flinkpipe` binary with the
//! developer's configuration removed), `fake_confluent` (an in-process fake of the Confluent Cloud
//! statements API with fault injection) and `graph_fixture` (graphs built in memory).
//!
//! Run one area with `cargo test --test testsuite plan::`; benchmarks are `#[ignore]`d tests run by
//! `scripts/bench-deploy.sh` and `make bench`.

mod fake_confluent;
mod graph_fixture;
mod memory_target;
mod support;

/// The analysis cache never changes a result: every file the commands write is byte-identical with the
mod analysis_cache;
/// The layering rule of the code map holds: floors, allowed upward imports, no import circle.
mod architecture;
/// Bad input gets a clear error naming the file and line, never a panic, and nothing is lost: commands
mod bad_input;
/// Blue-green versioning end to end on our example project in a temporary git repository: a logic change
mod blue_green;
/// The blue-green runbook against the Confluent fake: deploy green, status, decommission, orphans.
mod blue_green_workflow;
/// `project list-modified-files` and `project list-impacted-tables`: temporary git repositories built with
/// The changelog compressor as a property over random changelogs.
mod changelog;
mod changes;
/// Everyday command-line use: completions and man page from the clap definitions, SQL errors with source
mod cli_everyday;
mod column_lineage;
/// Confluent Cloud day 2 with what the service says: masked server text, stop/resume by PUT, exceptions,
/// state limits, warnings, offsets, label selectors, pool resizes.
mod confluent_day2;
/// Confluent Cloud day-2 operations against the fake: dry runs, explain, pools, capacity, per-environment SQL, housekeeping, lag.
mod confluent_ops;
/// Deploy speed against the fake (run with `scripts/bench-deploy.sh`, or
mod deploy_bench;
/// The real binary against the fake Confluent server, on a copy of the example project:
mod deploy_cli;
/// The Confluent Cloud client against the in-process fake: lifecycle, pagination, errors, retries,
mod deploy_confluent;
mod deploy_decide;
/// The deploy executor against the fake Confluent server: order, parallelism, idempotency and the same
mod deploy_executor;
/// The README and the mdBook under docs/: generated command reference fresh, README short, links resolve.
mod docs;
/// Day-2 commands on a real Flink: live `sql:` checks read to the end, `prepare` on project tables.
mod e2e_day2;
/// Dry run, lag, explain and a rejected restart on a real Flink (datagen → blackhole, no Kafka).
mod e2e_engine_check;
/// End to end on a real Apache Flink 2.2 + SQL Gateway + Kafka stack (`scripts/local-flink.sh up`):
mod e2e_gateway;
mod e2e_gateway_ops;
/// Health on a real Flink: a running job whose checkpoints fail is degraded, with Flink's reason.
mod e2e_health;
/// Who still reads blue on the local Kafka: a consumer group's committed offsets and lag.
mod e2e_kafka_readers;
/// The release loop on a real Flink: release-check's verdicts, a consumer group blocking decommission,
/// rollback.
mod e2e_release;
/// The unit-test harness on a real Flink: the fixtures suites, a wrong expectation; the integration
/// test of a three-table subgraph.
mod e2e_unit_tests;
mod e2e_upgrade;
/// `upgrade-check --empirical` on a real Flink: three changes of an aggregate restored for real on
/// its unit-test fixtures.
mod e2e_upgrade_empirical;
/// Our example project (`fixtures/`): the graph must equal the hand-derived truth in
mod example_project;
/// The SQL Gateway target against a scripted in-process fake of the gateway and JobManager REST
mod gateway_target;
/// DOT, Mermaid and JSON exports and the report trees, as exact text.
mod graph_export;
/// The graph model on shift_left's p2 fixture graph, on cycles and self-loops, and on a 10,000-table DAG.
mod graph_model;
/// dbt-style selection on shift_left's p2 fixture graph.
mod graph_select;
/// Integration tests of a subgraph: init's files, the order and renaming of its statements, refusals,
/// a run against the Confluent fake.
mod integration_tests;
/// `pipeline test-live`: data tests of tests/live_tests.yaml on the Confluent fake, JUnit.
mod live_tests;
/// Nothing is written outside the project: no command writes through a link that leaves it.
#[cfg(unix)]
mod outside_writes;
mod plan;
/// The descendant cascade never spreads beyond the start tables: a table without a job of its own whose
mod plan_cascade;
/// Execution-plan rules on small synthetic projects: scope filters at every level of the cascade, state
/// `sql query` and `table preview` against the Confluent fake.
mod query;
/// Reliability at scale and under abuse: 100,000-table chains, metadata size on fan-outs, special and
/// oversized files, builds killed or interrupted mid-batch, small input mistakes.
mod reliability;
/// `pipeline rollback`: green stopped or deleted children first, blue untouched, the record closed,
/// the git command that restores the blue SQL; refusals; the in-memory target.
mod rollback;
/// Scaffolding: `project init`, `table init` (templates, overrides, naming) and the naming lint
mod scaffold;
mod schema_changes;
/// shift_left's remaining commands (#28): metadata per table, report formats, Makefiles, config
/// validation, statements per pool, and a shift_left-style Makefile run with flinkpipe.
mod shift_left_commands;
/// The whole offline workflow on shift_left's own test project (a public fixture nobody here wrote):
mod shift_left_fixture;
/// Accuracy of the SQL front end on the labelled corpus (test data read from `../shared/corpus`).
mod sql_corpus;
/// The Flink dialect's coverage: expressions and statements of real Flink SQL that must parse with
mod sql_dialect;
/// Fuzzing the SQL front end: token-level mutations of real Flink SQL (the shared corpus and the cases of
mod sql_fuzz;
/// The fast tokenizer gives sqlparser's tokens and spans, or leaves the file to sqlparser (corpus and
/// mutations).
mod sql_lexer;
mod sql_parse_fast;
/// The SQL front end's answers as a project sees them (issue #14): what a statement the parser rejected,
mod sql_project;
/// Accuracy of the SQL front end on real Flink SQL from public repositories it was not developed
mod sql_real_sample;
/// Span-based renaming over the whole labelled corpus: renaming every table of every file to `<name>_v2`
mod sql_rewrite;
/// Throughput of `sql::analyze` on 20,000 small DDL/DML files (~30 lines each), as the project scan runs
mod sql_speed;
/// One test per hard case of Flink SQL (CTE shadowing, lookup joins, TEMPORARY objects, hints, …):
/// exact sinks, sources
mod sql_tricky;
/// Statement sets keep per-member lineage: each sink reads only what its own INSERT reads, a member
mod statement_set_release;
mod statement_sets;
/// One resolver of user-given table names behind every command: a pre-version and a case-changed name.
mod table_names;
/// Unit tests of one table's SQL: init, run on the Confluent fake (pass, a wrong expectation's diff, JUnit),
/// bad input refused with file and line before anything is sent, cleanup after a killed run.
mod unit_tests;
mod update_ut_ddl;
mod upgrade_check;
