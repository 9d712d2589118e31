#!/usr/bin/env bash
# Prints a TCP port that no PostgreSQL socket or listener uses, for a throwaway cluster
# (pg_virtualenv's own choice can collide with another temporary cluster on this machine).
for _ in $(seq 1 50); do
  port=$(( 20000 + RANDOM % 30000 ))
  [ -e "/var/run/postgresql/.s.PGSQL.$port" ] && continue
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
  echo "$port"; exit 0
done
echo 5432
