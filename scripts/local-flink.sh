#!/usr/bin/env bash
# A local Apache Flink + Apache Kafka stack for flinkpipe's demo and end-to-end tests, on 127.0.0.1 only.
#
#   scripts/local-flink.sh up       download (once, cached), configure and start; waits until ready
#   scripts/local-flink.sh down     stop the processes this script started (by recorded PID), nothing else
#   scripts/local-flink.sh status   what runs, with PIDs, ports and resident memory
#   scripts/local-flink.sh env      print FLINKPIPE_* settings for a flinkpipe gateway target
#   scripts/local-flink.sh offsets TOPIC...  records per topic (end offsets), to check that rows arrived
#   scripts/local-flink.sh topics DIR...  create the Kafka topics named by 'topic' options in the DDL
#                                   files under DIR (an infrastructure step: Flink does not create
#                                   topics, and a source on a missing topic fails at start)
#
# What it runs (versions pinned below, checked against scripts/local-flink/SHA256SUMS):
#   - Apache Flink 2.2.0 session cluster (JobManager :8081 REST, TaskManager with 64 slots) from the PyPI
#     wheels apache-flink (bin/, conf/) and apache-flink-libraries (lib/, opt/, plugins/);
#   - the Flink SQL Gateway (:8083) = org.apache.flink:flink-sql-gateway:2.2.0 from Maven Central;
#   - the Kafka SQL connector org.apache.flink:flink-sql-connector-kafka:5.0.0-2.2 (the build for Flink 2.2);
#   - an Apache Kafka 4.1.1 broker in KRaft mode (:9092, controller :9093) from org.apache.kafka:kafka_2.13
#     and its dependency closure, on Java 17.
#
# Folders (both outside the repository):
#   FLINKPIPE_STACK_CACHE  downloads and the unpacked FLINK_HOME (default: ~/.cache/flinkpipe/stack)
#   FLINKPIPE_STACK_WORK   configuration, logs, PIDs, checkpoints, savepoints, Kafka data
#                          (default: /tmp/flinkpipe-stack); `up` starts from empty topics and state.
# Needs: java 17+, python3 with pip (PyPI), mvn (Maven Central), curl, unzip.
set -euo pipefail

FLINK_VERSION=2.2.0
KAFKA_CONNECTOR_VERSION=5.0.0-2.2
KAFKA_VERSION=4.1.1
HERE="$(cd "$(dirname "$0")" && pwd)"
SUPPORT="$HERE/local-flink"
CACHE="${FLINKPIPE_STACK_CACHE:-$HOME/.cache/flinkpipe/stack}"
WORK="${FLINKPIPE_STACK_WORK:-/tmp/flinkpipe-stack}"
FLINK_HOME_DIR="$CACHE/flink-$FLINK_VERSION"
KAFKA_LIBS="$CACHE/kafka-$KAFKA_VERSION/libs"
RUN="$WORK/run"
JM_PORT=8081
GATEWAY_PORT=8083
KAFKA_PORT=9092
CONTROLLER_PORT=9093
READY_TIMEOUT="${FLINKPIPE_STACK_TIMEOUT:-180}"

log() { printf '[local-flink] %s\n' "$*" >&2; }
die() { printf '[local-flink] error: %s\n' "$*" >&2; exit 1; }

need_tools() {
  local tool
  for tool in java javac python3 mvn curl unzip sha256sum; do
    command -v "$tool" >/dev/null || die "missing tool: $tool (Debian: openjdk-17-jdk-headless maven python3-pip curl unzip)"
  done
  python3 -m pip --version >/dev/null 2>&1 || die "python3 has no pip (Debian: python3-pip)"
  local major
  major="$(java -version 2>&1 | sed -nE '1s/.*version "([0-9]+).*/\1/p')"
  [ "${major:-0}" -ge 17 ] || die "Java 17 or newer is required (found: $(java -version 2>&1 | head -1))"
}

# Verifies every file named in SHA256SUMS that lives in folder $1 (names are unique across folders).
verify() {
  local dir="$1" name sum file checked=0
  while read -r sum name; do
    [ -n "$sum" ] && [ "${sum:0:1}" != "#" ] || continue
    file="$dir/$name"
    [ -f "$file" ] || continue
    echo "$sum  $file" | sha256sum --quiet -c - >/dev/null 2>&1 || die "checksum mismatch: $file (delete $CACHE and retry)"
    checked=$((checked + 1))
  done < "$SUPPORT/SHA256SUMS"
  local present
  present="$(find "$dir" -maxdepth 1 -type f \( -name '*.jar' -o -name '*.whl' \) | wc -l)"
  [ "$checked" -eq "$present" ] || die "$dir has $present files but SHA256SUMS pins $checked of them"
}

# Maven, quiet; its output is shown only when it fails.
maven() {
  local out
  out="$(mktemp)"
  if ! mvn -q -B -f "$SUPPORT/pom.xml" "$@" >"$out" 2>&1; then
    cat "$out" >&2
    rm -f "$out"
    die "mvn $* failed (Maven Central reachable?)"
  fi
  rm -f "$out"
}

install() {
  need_tools
  mkdir -p "$CACHE"
  if [ ! -f "$FLINK_HOME_DIR/.installed" ]; then
    local dl="$CACHE/downloads"
    mkdir -p "$dl/wheels" "$dl/flink-jars"
    log "downloading Apache Flink $FLINK_VERSION wheels from PyPI (~315 MB, once)"
    # bin/ and conf/ are shell scripts and YAML: the wheel of any platform will do; pin one.
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 \
      --platform manylinux2014_x86_64 -d "$dl/wheels" \
      "apache-flink==$FLINK_VERSION" "apache-flink-libraries==$FLINK_VERSION"
    verify "$dl/wheels"
    log "downloading flink-sql-gateway $FLINK_VERSION and flink-sql-connector-kafka $KAFKA_CONNECTOR_VERSION (Maven Central)"
    maven -Pflink dependency:copy-dependencies -DoutputDirectory="$dl/flink-jars"
    verify "$dl/flink-jars"
    local unpack="$CACHE/unpack.$$"
    rm -rf "$unpack" && mkdir -p "$unpack"
    unzip -q "$dl"/wheels/apache_flink-"$FLINK_VERSION"-*.whl 'pyflink/bin/*' 'pyflink/conf/*' -d "$unpack"
    unzip -q -o "$dl"/wheels/apache_flink_libraries-"$FLINK_VERSION"-*.whl \
      'pyflink/lib/*' 'pyflink/opt/*' 'pyflink/plugins/*' 'pyflink/bin/*' -d "$unpack"
    cp "$dl/flink-jars/flink-sql-gateway-$FLINK_VERSION.jar" "$unpack/pyflink/opt/"
    cp "$dl/flink-jars/flink-sql-connector-kafka-$KAFKA_CONNECTOR_VERSION.jar" "$unpack/pyflink/lib/"
    chmod +x "$unpack"/pyflink/bin/*.sh "$unpack/pyflink/bin/flink"
    mkdir -p "$unpack/pyflink/log"
    rm -rf "$FLINK_HOME_DIR" && mv "$unpack/pyflink" "$FLINK_HOME_DIR" && rm -rf "$unpack"
    rm -rf "$dl/wheels"   # 315 MB; the unpacked FLINK_HOME is what is kept
    touch "$FLINK_HOME_DIR/.installed"
  fi
  if [ ! -f "$KAFKA_LIBS/.installed" ]; then
    log "downloading Apache Kafka $KAFKA_VERSION and its dependencies (Maven Central)"
    rm -rf "$KAFKA_LIBS" && mkdir -p "$KAFKA_LIBS"
    maven -Pkafka dependency:copy-dependencies -DincludeScope=runtime \
      -DoutputDirectory="$KAFKA_LIBS"
    verify "$KAFKA_LIBS"
    touch "$KAFKA_LIBS/.installed"
  fi
}

# Whether process $1 is a JVM this script started: `java`, with our work folder on its command line.
ours() {
  local pid="$1"
  [ -r "/proc/$pid/cmdline" ] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "java" ] || return 1
  tr '\0' '\n' < "/proc/$pid/cmdline" | grep -qE "(^|[=:])$(printf '%s' "$WORK" | sed 's/[][\.*^$/]/\\&/g')/"
}

pid_files() {
  [ -d "$RUN" ] || return 0
  find "$RUN" -maxdepth 1 -name '*.pid' | sort
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for() {
  local what="$1" check="$2" logfile="$3" start=$SECONDS
  until eval "$check" >/dev/null 2>&1; do
    if (( SECONDS - start > READY_TIMEOUT )); then
      log "$what not ready after ${READY_TIMEOUT}s; last lines of $logfile:"
      tail -n 30 "$logfile" >&2 2>/dev/null || true
      die "$what did not start"
    fi
    sleep 1
  done
  log "$what ready ($((SECONDS - start)) s)"
}

write_config() {
  local conf="$WORK/conf"
  mkdir -p "$conf" "$WORK/log" "$RUN" "$WORK/tmp" "$WORK/checkpoints" "$WORK/savepoints"
  cp "$FLINK_HOME_DIR"/conf/log4j*.properties "$FLINK_HOME_DIR"/conf/logback*.xml "$conf/" 2>/dev/null || true
  # Keep the shipped env.java.opts.all: its --add-opens/--add-exports flags are required on JDK 17.
  local opts
  opts="$(python3 - "$FLINK_HOME_DIR/conf/config.yaml" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^env:\s*\n(?:[ \t].*\n)*?\s+java:\s*\n(?:[ \t].*\n)*?\s+opts:\s*\n(?:[ \t].*\n)*?\s+all:\s*(.+)$", text, re.M)
print(m.group(1).strip() if m else "")
EOF
)"
  [ -n "$opts" ] || die "could not read env.java.opts.all from $FLINK_HOME_DIR/conf/config.yaml"
  cat > "$conf/config.yaml" <<EOF
# Written by scripts/local-flink.sh: loopback only, small memory.
env:
  java:
    opts:
      all: $opts
      sql-gateway: -Xmx384m -Xms64m
  pid:
    dir: $RUN
  log:
    dir: $WORK/log
io:
  tmp:
    dirs: $WORK/tmp
jobmanager:
  bind-host: 127.0.0.1
  rpc:
    address: 127.0.0.1
    port: 6123
  memory:
    process:
      size: 1024m
  execution:
    failover-strategy: region
taskmanager:
  bind-host: 127.0.0.1
  host: 127.0.0.1
  numberOfTaskSlots: 64
  memory:
    process:
      size: 2048m
    network:
      min: 128m
      max: 128m
parallelism:
  default: 1
rest:
  address: 127.0.0.1
  bind-address: 127.0.0.1
  port: $JM_PORT
blob:
  server:
    port: 6124
web:
  tmpdir: $WORK/tmp
execution:
  target: remote
  checkpointing:
    interval: 5s
    dir: file://$WORK/checkpoints
    savepoint-dir: file://$WORK/savepoints
restart-strategy:
  type: fixed-delay
  fixed-delay:
    attempts: 2
    delay: 2s
sql-gateway:
  session:
    idle-timeout: 30min
  endpoint:
    rest:
      address: 127.0.0.1
      bind-address: 127.0.0.1
      port: $GATEWAY_PORT
EOF
  mkdir -p "$WORK/kafka-data"
  cat > "$WORK/conf/kafka.properties" <<EOF
# Written by scripts/local-flink.sh: one KRaft node, loopback only.
process.roles=broker,controller
node.id=1
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
controller.quorum.voters=1@127.0.0.1:$CONTROLLER_PORT
log.dirs=$WORK/kafka-data
num.partitions=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.retention.hours=24
EOF
  cat > "$WORK/conf/kafka-log4j2.yaml" <<EOF
Configuration:
  Appenders:
    File:
      name: file
      fileName: $WORK/log/kafka.log
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        ref: file
EOF
}

kafka_java() {
  java -Xms128m -Xmx384m -Dlog4j2.configurationFile="$WORK/conf/kafka-log4j2.yaml" \
    -Dflinkpipe.stack="$WORK" -cp "$KAFKA_LIBS/*" "$@"
}

up() {
  local started=$SECONDS
  install
  local live
  live="$(running | wc -l)"
  if [ "$live" -ge 4 ]; then
    log "already running (scripts/local-flink.sh status); nothing to do"
    return 0
  elif [ "$live" -gt 0 ]; then
    running >&2
    die "the stack is partly running ($live of 4 processes); run scripts/local-flink.sh down first"
  fi
  local port
  for port in $JM_PORT $GATEWAY_PORT $KAFKA_PORT $CONTROLLER_PORT 6123 6124; do
    port_busy "$port" && die "port 127.0.0.1:$port is in use by another process; stop it first"
  done
  # Only a folder this script made is emptied (it holds our marker), never whatever the variable names.
  if [ -e "$WORK" ] && [ ! -f "$WORK/.flinkpipe-stack" ] && [ -n "$(ls -A "$WORK" 2>/dev/null)" ] \
    && ! grep -qs "Written by scripts/local-flink.sh" "$WORK/conf/config.yaml"; then
    die "$WORK exists and was not made by this script; set FLINKPIPE_STACK_WORK to another folder"
  fi
  rm -rf "$WORK" && mkdir -p "$WORK" && touch "$WORK/.flinkpipe-stack"
  write_config
  export FLINK_HOME="$FLINK_HOME_DIR" FLINK_CONF_DIR="$WORK/conf" FLINK_LOG_DIR="$WORK/log" FLINK_PID_DIR="$RUN"

  log "starting Kafka $KAFKA_VERSION (KRaft) on 127.0.0.1:$KAFKA_PORT"
  kafka_java kafka.tools.StorageTool format -t "flinkpipe-local-kafka0" -c "$WORK/conf/kafka.properties" \
    > "$WORK/log/kafka-format.out" 2>&1 || { cat "$WORK/log/kafka-format.out" >&2; die "kafka storage format failed"; }
  nohup java -Xms128m -Xmx384m -Dlog4j2.configurationFile="$WORK/conf/kafka-log4j2.yaml" \
    -Dflinkpipe.stack="$WORK" -cp "$KAFKA_LIBS/*" kafka.Kafka "$WORK/conf/kafka.properties" \
    > "$WORK/log/kafka.out" 2>&1 &
  echo $! > "$RUN/kafka.pid"

  log "starting Flink $FLINK_VERSION JobManager (:$JM_PORT) and TaskManager"
  "$FLINK_HOME/bin/jobmanager.sh" start > "$WORK/log/jobmanager-start.out" 2>&1
  "$FLINK_HOME/bin/taskmanager.sh" start > "$WORK/log/taskmanager-start.out" 2>&1
  log "starting the SQL Gateway (:$GATEWAY_PORT)"
  "$FLINK_HOME/bin/sql-gateway.sh" start -Dsql-gateway.endpoint.rest.address=127.0.0.1 \
    > "$WORK/log/sql-gateway-start.out" 2>&1

  wait_for "Kafka" "grep -q 'Kafka Server started' \"\$WORK/log/kafka.log\" && port_busy $KAFKA_PORT" "$WORK/log/kafka.out"
  wait_for "Flink cluster" "curl -fsS http://127.0.0.1:$JM_PORT/overview | grep -Eq '\"taskmanagers\":[1-9]'" \
    "$(ls "$WORK"/log/flink-*standalonesession*.log 2>/dev/null | head -1)"
  wait_for "SQL Gateway" "curl -fsS http://127.0.0.1:$GATEWAY_PORT/v1/info" \
    "$(ls "$WORK"/log/flink-*sql-gateway*.log 2>/dev/null | head -1)"
  log "stack up in $((SECONDS - started)) s: JobManager http://127.0.0.1:$JM_PORT, SQL Gateway http://127.0.0.1:$GATEWAY_PORT, Kafka 127.0.0.1:$KAFKA_PORT"
}

# "name pid" for every live process this script started.
running() {
  local f pid name
  for f in $(pid_files); do
    name="$(basename "$f" .pid)"
    while read -r pid; do
      [ -n "$pid" ] || continue
      if ours "$pid"; then
        echo "$name $pid"
      fi
    done < "$f"
  done
}

down() {
  local procs name pid
  procs="$(running)"
  if [ -z "$procs" ]; then
    log "nothing running"
    return 0
  fi
  # Flink first (its jobs write to Kafka), the broker last.
  for name_order in sql-gateway taskexecutor standalonesession kafka; do
    while read -r name pid; do
      [ -n "$name" ] || continue
      case "$name" in *"$name_order"*) log "stopping $name (pid $pid)"; kill -TERM "$pid" 2>/dev/null || true ;; esac
    done <<< "$procs"
  done
  local start=$SECONDS
  while [ -n "$(running)" ] && (( SECONDS - start < 30 )); do sleep 1; done
  while read -r name pid; do
    [ -n "$name" ] || continue
    log "still alive after 30 s, killing $name (pid $pid)"
    kill -KILL "$pid" 2>/dev/null || true
  done <<< "$(running)"
  log "stopped"
}

status() {
  local procs name pid rss
  procs="$(running)"
  if [ -z "$procs" ]; then
    echo "local stack: not running (work folder $WORK)"
    return 3
  fi
  echo "local stack: running (work folder $WORK)"
  while read -r name pid; do
    rss="$(awk '/VmRSS/ {printf "%d MB", $2/1024}' "/proc/$pid/status" 2>/dev/null || echo '?')"
    printf '  %-40s pid %-8s rss %s\n' "$name" "$pid" "$rss"
  done <<< "$procs"
  echo "  JobManager  http://127.0.0.1:$JM_PORT   SQL Gateway  http://127.0.0.1:$GATEWAY_PORT   Kafka  127.0.0.1:$KAFKA_PORT"
}

# Kafka topics of the DDL files under the given folders: the value of every 'topic' option.
topics() {
  [ $# -gt 0 ] || die "usage: $0 topics DIR..."
  [ -n "$(running)" ] || die "the stack is not running (scripts/local-flink.sh up)"
  local names
  names="$(python3 - "$@" <<'EOF'
import pathlib, re, sys
found = []
for d in sys.argv[1:]:
    root = pathlib.Path(d)
    files = [root] if root.is_file() else sorted(root.rglob("*.sql"))
    for f in files:
        if f.name.startswith("dml."):
            continue
        for t in re.findall(r"'topic'\s*=\s*'([^']+)'", f.read_text(errors="replace")):
            if t not in found:
                found.append(t)
print("\n".join(found))
EOF
)"
  [ -n "$names" ] || { log "no 'topic' option found under $*"; return 0; }
  local list
  mapfile -t list <<< "$names"
  java -cp "$KAFKA_LIBS/*" -Dlog4j2.configurationFile="$WORK/conf/kafka-log4j2.yaml" \
    "$SUPPORT/KafkaTool.java" create "127.0.0.1:$KAFKA_PORT" "${list[@]}"
}

# Records in each topic (end offsets summed over partitions; -1 when the topic does not exist).
offsets() {
  [ $# -gt 0 ] || die "usage: $0 offsets TOPIC..."
  java -cp "$KAFKA_LIBS/*" -Dlog4j2.configurationFile="$WORK/conf/kafka-log4j2.yaml" \
    "$SUPPORT/KafkaTool.java" offsets "127.0.0.1:$KAFKA_PORT" "$@"
}

env_vars() {
  echo "export FLINKPIPE_GATEWAY_URL=http://127.0.0.1:$GATEWAY_PORT"
  echo "export FLINKPIPE_JOBMANAGER_URL=http://127.0.0.1:$JM_PORT"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  install) install ;;
  env) env_vars ;;
  topics) shift; topics "$@" ;;
  offsets) shift; offsets "$@" ;;
  *) echo "usage: $0 up|down|status|install|env|topics DIR...|offsets TOPIC..." >&2; exit 2 ;;
esac
