#!/bin/busybox sh
# /init of the virtual board's guest (tests/vm/README.md, "The guest").
# One boot: mount the store's ext4 disk (/dev/vda), start outbox-sink on
# the guest's loopback with its request log on the log port (a file on the
# host that outlives the power cut: the PC's second serial port, ttyS1, or
# the ARM board's virtio console, hvc0), run outbox-pos-sim on the store
# with its output on the console (ttyS0 or ttyAMA0),
# and power off when it exits. The harness usually cuts the power first.
#
# Kernel command line (besides the kernel's own words):
#   outbox_sales=N      --sales: the total; pos-sim continues from the
#                       store's counter
#   outbox_rate=R       --rate (sales per second)
#   outbox_seed=S       the sink's --seed for its failures and drops
#   outbox_no_sync=1    pos-sim --fsync off: the broken store
#   outbox_log=DEV      the log port (default /dev/ttyS1)
#   outbox_profile=P    the agent's memory_profile ("default" or "small")
#   outbox_memory=S     the memory run instead: no sink, so the store's
#                       backlog stays pending; pos-sim runs S seconds, then
#                       its VmRSS and VmHWM are printed and it is stopped
# Lines for the harness start with "outbox-vm: "; pos-sim's own lines
# ("sale ...", "drained") are printed as they are.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

say() { echo "outbox-vm: $*"; }
halt() {
  say "halt $1"
  poweroff -f
}

sales=0 rate=20 seed=1 no_sync= log=/dev/ttyS1 profile=default memory=
for word in $(cat /proc/cmdline); do
  case "$word" in
  outbox_sales=*) sales=${word#*=} ;;
  outbox_rate=*) rate=${word#*=} ;;
  outbox_seed=*) seed=${word#*=} ;;
  outbox_no_sync=1) no_sync="--fsync off" ;;
  outbox_log=*) log=${word#*=} ;;
  outbox_profile=*) profile=${word#*=} ;;
  outbox_memory=*) memory=${word#*=} ;;
  esac
done

for m in $(cat /lib/modules/order); do
  insmod /lib/modules/$m.ko || halt "insmod-failed $m"
done
ifconfig lo 127.0.0.1 up || halt "no-loopback"
# A virtio console appears once its driver probed it.
i=0
while [ ! -c "$log" ]; do
  i=$((i + 1))
  [ $i -gt 100 ] && halt "no-log-port $log"
  sleep 0.05
done
# Raw: the sink's lines reach the host byte for byte (no \r added).
stty -F "$log" raw -echo || halt "no-log-port $log"

# The kernel probes virtio-blk asynchronously; wait for the node.
i=0
while [ ! -b /dev/vda ]; do
  i=$((i + 1))
  [ $i -gt 100 ] && halt "no-disk"
  sleep 0.05
done
# Background writeback within 0.1-0.2 s instead of 30 s: writes the store
# did not sync yet (the agent's settlements, synced once a second;
# RocksDB's flushes and compactions before their fsync) reach the disk's
# volatile cache and wait there, unflushed, for the next sync, so that a
# cut finds some there. An fsync alone leaves them there only for a round
# trip between its writes and its flush.
echo 10 >/proc/sys/vm/dirty_expire_centisecs
echo 10 >/proc/sys/vm/dirty_writeback_centisecs
mount -t ext4 /dev/vda /mnt || halt "mount-failed"
say "mounted"

cat >/tmp/secret <<'EOF'
whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
EOF
chmod 600 /tmp/secret
# Short retry and probe delays: a boot lives a few seconds.
cat >/tmp/agent.textproto <<EOF
destinations {
  name: "sink"
  url: "http://127.0.0.1:8080/"
  secrets_file: "/tmp/secret"
  connect_timeout: "2s"
  timeout: "5s"
}
routes { event_type: "*" destination: "sink" }
retry { base_delay: "20ms" max_delay: "200ms" }
agent {
  probe_interval_min: "50ms"
  probe_interval_max: "300ms"
  memory_profile: "$profile"
}
EOF

bin=/opt/outbox/bin
if [ -n "$memory" ]; then
  $bin/outbox-pos-sim --db /mnt/store --config /tmp/agent.textproto \
    --sales "$sales" --rate "$rate" >/tmp/pos-sim.out 2>/tmp/pos-sim.err &
  pid=$!
  sleep "$memory"
  # An exited pos-sim has no status, or (a zombie) no VmRSS line.
  status=/proc/$pid/status
  rss=$(sed -n 's/^VmRSS:[^0-9]*\([0-9]*\) kB/\1/p' $status 2>/dev/null)
  hwm=$(sed -n 's/^VmHWM:[^0-9]*\([0-9]*\) kB/\1/p' $status 2>/dev/null)
  if [ -z "$hwm" ]; then
    sed 's/^/outbox-vm: stderr: /' /tmp/pos-sim.err | tail -20
    halt "memory-failed"
  fi
  say "memory rss_kb=$rss hwm_kb=$hwm sales=$(grep -c '^sale ' /tmp/pos-sim.out)"
  kill -TERM $pid
  wait $pid
  umount /mnt || halt "umount-failed"
  halt "done"
fi
$bin/outbox-sink --port 8080 --port-file /tmp/sink.port \
  --secret-file /tmp/secret --log "$log" \
  --fail-rate 0.1 --drop-rate 0.1 --seed "$seed" >/dev/null 2>&1 &
sink=$!
i=0
while [ ! -s /tmp/sink.port ]; do
  i=$((i + 1))
  [ $i -gt 200 ] && halt "no-sink"
  sleep 0.05
done
say "sink-ready"

# Its stderr (the agent's log) is kept off the console: a line written
# in pieces there could break into a "sale" line.
$bin/outbox-pos-sim --db /mnt/store --config /tmp/agent.textproto \
  --sales "$sales" --rate "$rate" $no_sync 2>/tmp/pos-sim.err
rc=$?
[ $rc -ne 0 ] && sed 's/^/outbox-vm: stderr: /' /tmp/pos-sim.err | tail -20
say "pos-sim-exit $rc"

kill -TERM $sink
wait $sink
umount /mnt || halt "umount-failed"
say "unmounted"
halt "done"
