#!/usr/bin/env bash
# Prints a TCP port that no PostgreSQL socket or listener uses, for a throwaway cluster
# (pg_virtualenv's own choice can collide with another temporary cluster on this machine).
# The port is taken below the kernel's ephemeral range (net.ipv4.ip_local_port_range): the client
# side of every outgoing connection (a test's thousands of connect/close cycles, libpq) holds an
# ephemeral port, in TIME_WAIT for a minute after it closes, and a server cannot bind a port such
# a socket holds (EADDRINUSE, even with SO_REUSEADDR), so a port from that range can be "free"
# when checked and refused when the server binds it.
low=32768
read -r low _ < /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
base=10000
[ "$low" -gt $((base + 2000)) ] || base=1100
span=$((low - base))
for _ in $(seq 1 50); do
  port=$(( base + RANDOM % span ))
  [ -e "/var/run/postgresql/.s.PGSQL.$port" ] && continue
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
  echo "$port"; exit 0
done
echo 5432
