#!/usr/bin/env bash
# The client the official MCP conformance suite drives in its client scenarios
# (`conformance client --command tests/conformance/client.sh --scenario NAME`): the suite
# starts a mock server, then runs this with the server's URL as the last argument and
# MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION (the wire: 2025-11-25 or
# 2026-07-28) and, for some scenarios, MCP_CONFORMANCE_CONTEXT (JSON) in the environment.
#
# Each scenario is what a user of the Toolport CLI would type to do what the scenario
# asks (`toolport list`, `toolport call TOOL ARGS`): the behaviour under test (headers,
# _meta, elicitation answers, SSE resumption, tool filtering) is the CLI's own. The binary
# is $TOOLPORT_BIN, else build/toolport.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${TOOLPORT_BIN:-$root/build/toolport}
[[ $# -ge 1 ]] || { echo "usage: MCP_CONFORMANCE_SCENARIO=NAME $0 [...] URL" >&2; exit 2; }
url=${!#}
scenario=${MCP_CONFORMANCE_SCENARIO:?MCP_CONFORMANCE_SCENARIO is not set}
target=(--url "$url")
[[ -n "${MCP_CONFORMANCE_PROTOCOL_VERSION:-}" ]] && target+=(--protocol-version "$MCP_CONFORMANCE_PROTOCOL_VERSION")

tp() { echo "+ toolport $*" >&2; "$bin" "$@"; }
# The tools a server lists, one name a line.
tool_names() { tp list "${target[@]}" --json | jq -r '.[].name'; }

case $scenario in
  initialize | request-metadata | json-schema-ref-no-deref)
    tp list "${target[@]}"
    ;;
  tools_call)
    tp call add_numbers '{"a": 2, "b": 3}' "${target[@]}"
    ;;
  elicitation-sep1034-client-defaults)
    # The tool asks the user; the CLI accepts with the schema's defaults.
    tp call test_client_elicitation_defaults '{}' --elicitation defaults "${target[@]}"
    ;;
  sse-retry)
    # The server ends the call's event stream before the answer; the CLI resumes it.
    tp call test_reconnection '{}' "${target[@]}"
    ;;
  sep-2322-client-request-state)
    # Multi round-trip requests (input_required), each answered and sent again.
    for tool in test_mrtr_echo_state test_mrtr_unrelated test_mrtr_no_state test_mrtr_no_result_type; do
      tp call "$tool" '{}' --elicitation defaults "${target[@]}"
    done
    ;;
  http-standard-headers)
    tp list "${target[@]}"
    tp call test_headers '{}' "${target[@]}"
    tp call my-hyphenated-tool '{}' "${target[@]}"
    ;;
  http-custom-headers)
    # The calls to make come in the context: {"toolCalls": [{"name", "arguments"}]}.
    calls=$(jq -c '.toolCalls[]' <<<"${MCP_CONFORMANCE_CONTEXT:?no MCP_CONFORMANCE_CONTEXT}")
    while IFS= read -r call; do
      tp call "$(jq -r .name <<<"$call")" "$(jq -c .arguments <<<"$call")" "${target[@]}"
    done <<<"$calls"
    ;;
  http-invalid-tool-headers)
    # Call every tool the CLI lists: those whose x-mcp-header markings are invalid are
    # not listed. Calling one by name anyway is refused (exit 1) without reaching the server.
    mapfile -t tools < <(tool_names)
    [[ ${#tools[@]} -gt 0 ]] || { echo "no tools listed" >&2; exit 1; }
    for tool in "${tools[@]}"; do tp call "$tool" '{"region": "us-west1"}' "${target[@]}"; done
    if tp call invalid_empty_header '{"value": "x"}' "${target[@]}"; then
      echo "a tool with an invalid x-mcp-header was called" >&2; exit 1
    fi
    ;;
  json-schema-2020-12-preservation)
    # Send the focal tool's inputSchema, as the CLI lists it, back to the echo tool.
    schema=$(tp list "${target[@]}" --json | jq -c '.[] | select(.name == "json_schema_2020_12_tool") | .inputSchema')
    [[ -n $schema ]] || { echo "json_schema_2020_12_tool is not listed" >&2; exit 1; }
    tp call json_schema_echo "{\"schema\": $schema}" "${target[@]}"
    ;;
  sep-2640-client-no-prefetch)
    # Listing skills reads none of their files.
    tp skills "${target[@]}"
    ;;
  sep-2640-client-verify-*)
    # Load every listed skill with its files, as a host does when it needs them: the CLI
    # verifies SKILL.md (size, digest, frontmatter) before it reads anything else, and a
    # skill that fails is not loaded (exit 1).
    mapfile -t skills < <(tp skills "${target[@]}" --json | jq -r '.[].frontmatter.name')
    [[ ${#skills[@]} -gt 0 ]] || { echo "no skills listed" >&2; exit 1; }
    failed=0
    for skill in "${skills[@]}"; do tp skills "$skill" --files "${target[@]}" || failed=1; done
    exit $failed
    ;;
  auth/*)
    # Connect and use the server as a user would, authorizing as it demands: OAuth runs
    # for real, with $BROWSER (below) standing in for the user's browser. Tokens are kept in
    # this run's own XDG_CONFIG_HOME, so the second command reuses the first one's (and
    # meets what changed on the server: step-up scopes, a moved authorization server).
    XDG_CONFIG_HOME=$(mktemp -d)
    export XDG_CONFIG_HOME
    trap 'rm -rf "$XDG_CONFIG_HOME"' EXIT
    # The "browser": fetches the authorization page and follows the authorization server's
    # redirect back to the CLI's loopback listener, as a user clicking "allow" would.
    export BROWSER="curl -fsS -L -o /dev/null --max-time 20 --noproxy '*'"
    context=${MCP_CONFORMANCE_CONTEXT:-"{}"}
    ctx() { jq -r --arg k "$1" '.[$k] // empty' <<<"$context"; }
    oauth=(--login-timeout 20 --client-metadata-url https://conformance-test.local/client-metadata.json)
    if [[ -n $(ctx client_id) ]]; then oauth+=(--client-id "$(ctx client_id)"); fi
    if [[ -n $(ctx client_secret) ]]; then
      export TOOLPORT_CLIENT_SECRET; TOOLPORT_CLIENT_SECRET=$(ctx client_secret)
    fi
    if [[ -n $(ctx private_key_pem) ]]; then
      ctx private_key_pem >"$XDG_CONFIG_HOME/client-key.pem"
      oauth+=(--client-key "$XDG_CONFIG_HOME/client-key.pem")
      [[ -n $(ctx signing_algorithm) ]] && oauth+=(--signing-alg "$(ctx signing_algorithm)")
    fi
    case $scenario in
      auth/client-credentials-*) oauth+=(--grant client_credentials) ;;
      auth/enterprise-managed-authorization)
        export TOOLPORT_IDP_ID_TOKEN; TOOLPORT_IDP_ID_TOKEN=$(ctx idp_id_token)
        oauth+=(--grant enterprise --idp-token-endpoint "$(ctx idp_token_endpoint)" --idp-client-id "$(ctx idp_client_id)")
        ;;
      auth/wif-jwt-bearer)
        export TOOLPORT_ASSERTION; TOOLPORT_ASSERTION=$(ctx valid_jwt)
        oauth+=(--grant jwt_bearer)
        ;;
    esac
    tp list "${target[@]}" "${oauth[@]}"
    tp call test-tool '{}' "${target[@]}" "${oauth[@]}"
    ;;
  *)
    echo "client.sh: no client behaviour for scenario $scenario" >&2
    exit 2
    ;;
esac
