#!/usr/bin/env bash
# Starts OpenStack Swift with its S3 layer (s3api + tempauth) on 127.0.0.1 for tests: a real object store
# that checks S3 signatures. One replica on a plain directory. Idempotent: exits at once when it answers.
# Prints the variables the tests read, as `export NAME=value` lines.
set -euo pipefail
dir=${SWIFT_DIR:-/tmp/switchyard-swift}
port=${S3_PORT:-8090}
memcache_port=${SWIFT_MEMCACHE_PORT:-11311}
export_vars() {
  echo "export S3_ENDPOINT=http://127.0.0.1:$port"
  echo "export S3_REGION=us-east-1"
  echo "export S3_ACCESS_KEY_ID=test:tester"
  echo "export S3_SECRET_ACCESS_KEY=testing"
  echo "export S3_FORCE_PATH_STYLE=true"
}
answers() { curl -s -o /dev/null -m 2 "http://127.0.0.1:$port/healthcheck"; }
if answers; then export_vars; exit 0; fi

if ! command -v swift-proxy-server >/dev/null || ! command -v memcached >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  # tempauth keeps its tokens in memcached, also for S3-signed requests.
  packages="swift-proxy swift-object swift-container swift-account memcached"
  apt-get install -y -q $packages >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q $packages >/dev/null; }
fi

mkdir -p "$dir/devices/d1" "$dir/run"
cat > "$dir/swift.conf" <<CONF
[swift-hash]
swift_hash_path_prefix = switchyard
swift_hash_path_suffix = switchyard
[storage-policy:0]
name = Policy-0
default = yes
CONF

# Rings: 2^8 partitions, one replica, one device per server.
for spec in account:6212 container:6211 object:6210; do
  kind=${spec%%:*}; kport=${spec##*:}
  if [ ! -f "$dir/$kind.ring.gz" ]; then
    swift-ring-builder "$dir/$kind.builder" create 8 1 1 >/dev/null
    swift-ring-builder "$dir/$kind.builder" add "r1z1-127.0.0.1:$kport/d1" 1 >/dev/null
    swift-ring-builder "$dir/$kind.builder" rebalance >/dev/null || true
  fi
  cat > "$dir/$kind-server.conf" <<CONF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = $kport
devices = $dir/devices
mount_check = false
swift_dir = $dir
user = $(id -un)
workers = 0
log_level = WARNING
[pipeline:main]
pipeline = $kind-server
[app:$kind-server]
use = egg:swift#$kind
CONF
done

cat > "$dir/proxy-server.conf" <<CONF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = $port
swift_dir = $dir
user = $(id -un)
workers = 0
log_level = WARNING
[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats s3api tempauth copy proxy-logging proxy-server
[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = testing .admin
[filter:s3api]
use = egg:swift#s3api
location = us-east-1
[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:$memcache_port
[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:copy]
use = egg:swift#copy
CONF

if ! { [ -f "$dir/run/memcached.pid" ] && kill -0 "$(cat "$dir/run/memcached.pid")" 2>/dev/null; }; then
  nohup memcached -l 127.0.0.1 -p "$memcache_port" -U 0 -m 32 -u "$(id -un)" >"$dir/run/memcached.log" 2>&1 &
  echo $! >"$dir/run/memcached.pid"
fi
for server in account container object proxy; do
  pidfile="$dir/run/$server.pid"
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then continue; fi
  nohup "swift-$server-server" "$dir/$server-server.conf" >"$dir/run/$server.log" 2>&1 &
  echo $! >"$pidfile"
done

for _ in $(seq 1 120); do
  if answers; then export_vars; exit 0; fi
  sleep 0.5
done
echo "Swift did not answer on 127.0.0.1:$port; logs in $dir/run" >&2
tail -n 20 "$dir"/run/*.log >&2 || true
exit 1
