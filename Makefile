# flinkpipe — developer entry points. `make demo` and `make test` work on a fresh machine with Rust.
SHELL := /bin/bash
CARGO ?= cargo
export PATH := $(HOME)/.cargo/bin:$(PATH)
DEMO_DIR := target/demo
# The release binary, wherever cargo puts it (CARGO_TARGET_DIR is honoured).
BIN := $(or $(CARGO_TARGET_DIR),target)/release/flinkpipe

.PHONY: build test demo bench lint clean

build:
	$(CARGO) build --release

test:
	$(CARGO) test --all-targets

# The main job on the bundled example: inventory, graph and an execution plan for fixtures/.
# fixtures/ is copied first, because the commands write files into the project.
demo: build
	@rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR) && cp -r fixtures/pipelines $(DEMO_DIR)/
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
	@echo; echo "== flinkpipe pipeline build-execution-plan --product-name sales --may-start-descendants"
	@$(BIN) pipeline build-execution-plan $(DEMO_DIR)/pipelines --product-name sales --may-start-descendants

bench:
	bash scripts/bench.sh

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings

clean:
	$(CARGO) clean
