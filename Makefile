# flinkpipe — developer entry points. `make demo` and `make test` work on a fresh machine with Rust.
SHELL := /bin/bash
CARGO ?= cargo
export PATH := $(HOME)/.cargo/bin:$(PATH)
DEMO_DIR := target/demo
# The release binary, wherever cargo puts it (CARGO_TARGET_DIR is honoured).
BIN := $(or $(CARGO_TARGET_DIR),target)/release/flinkpipe

.PHONY: build install test test-offline demo up down bench bench-large bench-shapes lint clean

# The local Apache Flink 2.2 + SQL Gateway + Kafka stack (scripts/local-flink.sh; Java 17, PyPI, Maven Central).
STACK := scripts/local-flink.sh
GATEWAY_CONFIG := $(DEMO_DIR)/config.yaml

build:
	$(CARGO) build --release

# Puts `flinkpipe` on PATH (~/.cargo/bin), where the examples and the generated table Makefiles
# expect it.
install:
	$(CARGO) install --path . --locked

# Every test, including the end-to-end scenario on a real Flink: the stack is started for the run and
# stopped afterwards (even when a test fails). It was already running? Then it is left running.
test:
	@$(CARGO) build --all-targets
	@was_up=0; bash $(STACK) status >/dev/null 2>&1 && was_up=1; \
	bash $(STACK) up || { bash $(STACK) down; exit 1; }; \
	FLINKPIPE_E2E=required $(CARGO) test --all-targets; rc=$$?; \
	if [ $$was_up = 0 ]; then bash $(STACK) down; fi; \
	exit $$rc

# Every test but the end-to-end scenario (no Java, no stack needed).
test-offline:
	$(CARGO) test --all-targets

up:
	bash $(STACK) up

down:
	bash $(STACK) down

# The main job on the bundled example: validate, inventory, metadata, graph and an execution plan for
# fixtures/, then the local Flink + Kafka stack, a live plan and a deploy, status and the running jobs.
# fixtures/ is copied first, because the commands write files into the project.
demo: build
	@rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR) && cp -r fixtures/pipelines $(DEMO_DIR)/
	@cp templates/project/gitignore $(DEMO_DIR)/.gitignore
	@echo "== flinkpipe pipeline validate $(DEMO_DIR)/pipelines"
	@$(BIN) pipeline validate $(DEMO_DIR)/pipelines
	@echo; echo "== flinkpipe table build-inventory $(DEMO_DIR)/pipelines"
	@$(BIN) table build-inventory $(DEMO_DIR)/pipelines
	@echo; echo "== flinkpipe pipeline build-all-metadata $(DEMO_DIR)/pipelines"
	@$(BIN) pipeline build-all-metadata $(DEMO_DIR)/pipelines
	@echo; echo "== flinkpipe pipeline graph --format mermaid"
	@$(BIN) pipeline graph $(DEMO_DIR)/pipelines --format mermaid
	@$(BIN) pipeline graph $(DEMO_DIR)/pipelines --format svg > $(DEMO_DIR)/graph.svg
	@$(BIN) pipeline graph $(DEMO_DIR)/pipelines --format html > $(DEMO_DIR)/lineage.html
	@echo "(also drawn as $(DEMO_DIR)/graph.svg and the lineage page $(DEMO_DIR)/lineage.html)"
	@printf 'flinkpipe:\n  statement_prefix: demo\n  gateway:\n    url: http://127.0.0.1:8083\n    jobmanager_url: http://127.0.0.1:8081\n    external_ddl: [%s]\n' "$(CURDIR)/fixtures/external" > $(GATEWAY_CONFIG)
	@echo; echo "== flinkpipe pipeline build-execution-plan --product-name sales --may-start-descendants --offline"
	@$(BIN) --config $(GATEWAY_CONFIG) pipeline build-execution-plan $(DEMO_DIR)/pipelines --product-name sales --may-start-descendants --offline
	@echo; echo "== local Apache Flink + Kafka stack (scripts/local-flink.sh up; reused when running)"
	@bash $(STACK) up 2>&1
	@bash $(STACK) topics $(DEMO_DIR)/pipelines fixtures/external
	@echo; echo "== flinkpipe pipeline build-execution-plan --dir pipelines (live phases from the cluster)"
	@$(BIN) --config $(GATEWAY_CONFIG) pipeline build-execution-plan $(DEMO_DIR)/pipelines --dir pipelines --may-start-descendants
	@echo; echo "== flinkpipe pipeline deploy --dir pipelines (to the SQL Gateway)"
	@$(BIN) --config $(GATEWAY_CONFIG) pipeline deploy $(DEMO_DIR)/pipelines --dir pipelines --may-start-descendants
	@echo; echo "== flinkpipe pipeline status"
	@$(BIN) --config $(GATEWAY_CONFIG) pipeline status $(DEMO_DIR)/pipelines
	@echo; echo "== running jobs (JobManager http://127.0.0.1:8081, web UI in a browser)"
	@curl -fsS http://127.0.0.1:8081/jobs/overview | python3 -c 'import json,sys; jobs=json.load(sys.stdin)["jobs"]; [print("  %-9s %s" % (j["state"], j["name"])) for j in sorted(jobs, key=lambda j: j["name"]) if j["state"] == "RUNNING"]'
	@echo; echo "Stop the demo's statements: $(abspath $(BIN)) --config $(abspath $(GATEWAY_CONFIG)) pipeline undeploy $(abspath $(DEMO_DIR))/pipelines --dir pipelines --no-ack"
	@echo "Stop the whole local stack (Flink, gateway, Kafka; also for anyone else using it): make down"
	@echo; echo "flinkpipe is at $(abspath $(BIN)); to use it as 'flinkpipe' (the README's examples, the table Makefiles): make install (cargo install --path . --locked, into ~/.cargo/bin)"

# 1,000 and 10,000 tables; any sizes with BENCH_SIZES="1000 10000 100000" make bench.
bench:
	bash scripts/bench.sh

# Also 100,000 tables: the first run (no cache) and the unchanged tree, each with peak memory
# (≈ 2 GB of scratch disk, 10–20 minutes on 2 cores).
bench-large:
	BENCH_SIZES="$${BENCH_SIZES:-1000 10000 100000}" bash scripts/bench.sh

# A 1,000,000-table chain and one source read by 10,000 tables (≈ 20 GB of scratch disk, 1–2 hours on 2 cores).
bench-shapes:
	bash scripts/bench-shapes.sh

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings

clean:
	$(CARGO) clean
