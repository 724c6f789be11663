# Sourced by the bench scripts: writes an nginx.conf that runs nginx in the foreground with
# every path under DIR (no root, no system files), access log off and long keep-alive, around
# the given http-level lines (a server block, an upstream).
#   write_nginx_conf DIR WORKERS <<'CONF'
#   server { listen 127.0.0.1:8080; location / { return 200 'ok'; } }
#   CONF
# Then: nginx -p DIR -c DIR/nginx.conf -e DIR/error.log
write_nginx_conf() {
  local dir=$1 workers=$2 kind
  mkdir -p "$dir"
  {
    printf 'worker_processes %s;\ndaemon off;\npid %s/nginx.pid;\nerror_log %s/error.log warn;\n' "$workers" "$dir" "$dir"
    printf 'events { worker_connections 1024; }\nhttp {\n  access_log off;\n'
    for kind in client_body proxy fastcgi uwsgi scgi; do printf '  %s_temp_path %s/%s;\n' "$kind" "$dir" "$kind"; done
    printf '  keepalive_requests 100000000;\n  keepalive_timeout 120s;\n'
    cat
    printf '}\n'
  } > "$dir/nginx.conf"
}
