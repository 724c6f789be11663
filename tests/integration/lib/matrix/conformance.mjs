// The real-client matrix's case table (lib/client_matrix.mjs) for the conformance pack: every tool
// listed and called, success and documented error paths, by the SDK 1.x and 2.x clients, the
// Inspector CLI and toolport list/call. client_matrix_conformance_{http,stdio}.test.mjs run it over
// each transport (a file each, so that each stays well inside the per-file timeout).


const CONFORMANCE_CASES = [
  { tool: 'greet', args: { name: 'Ada' }, expect: 'ok', inspector: true },
  { tool: 'test_simple_text', args: {}, expect: 'ok' },
  { tool: 'test_image_content', args: {}, expect: 'ok' },
  { tool: 'test_audio_content', args: {}, expect: 'ok' },
  { tool: 'test_embedded_resource', args: {}, expect: 'ok' },
  { tool: 'test_multiple_content_types', args: {}, expect: 'ok' },
  { tool: 'test_logging_tool', args: {}, expect: 'ok' },
  { tool: 'test_tool_with_logging', args: {}, expect: 'ok' },
  { tool: 'test_tool_with_progress', args: {}, expect: 'ok' },
  { tool: 'test_reconnection', args: {}, expect: 'ok' },
  { tool: 'test_custom_header', args: { region: 'eu-west' }, expect: 'ok' },
  { tool: 'test_custom_header', args: {}, expect: { code: 'MISSING_PARAMETER' }, inspector: true },
  { tool: 'test_error_handling', args: {}, expect: { code: 'INTERNAL_ERROR' }, inspector: true },
  { tool: 'json_schema_2020_12_tool', args: { name: 'Ada', email: 'ada@example.com' }, expect: 'ok' },
  { tool: 'json_schema_2020_12_tool', args: { name: 'Ada' }, expect: { code: 'INVALID_ARGUMENT' } },
  { tool: 'slow_compute', args: { seconds: 0.05, label: 'quick' }, expect: 'ok', inspector: true },
  { tool: 'slow_compute', args: {}, expect: { code: 'MISSING_PARAMETER' } },
  { tool: 'test_elicitation', args: { message: 'Your name?' }, expect: 'ok', needs: 'elicitation' },
  { tool: 'test_elicitation', args: {}, expect: { code: 'MISSING_PARAMETER' } },
  { tool: 'test_elicitation_sep1034_defaults', args: {}, expect: 'ok', needs: 'elicitation' },
  { tool: 'test_elicitation_sep1330_enums', args: {}, expect: 'ok', needs: 'elicitation' },
  { tool: 'test_streaming_elicitation', args: {}, expect: 'ok', needs: 'elicitation' },
  { tool: 'confirm_delete', args: { filename: 'notes.txt' }, expect: 'ok', needs: 'elicitation' },
  { tool: 'confirm_delete', args: {}, expect: { code: 'MISSING_PARAMETER' } },
  { tool: 'multi_input', args: {}, expect: 'ok', needs: 'elicitation' },
  // Like the reference server, it answers without sampling too, saying so in its text.
  { tool: 'test_sampling', args: { prompt: 'Say hi' }, expect: 'ok', needs: 'sampling', without: 'ok' },
  { tool: 'test_sampling', args: {}, expect: { code: 'MISSING_PARAMETER' } },
  { tool: 'test_missing_capability', args: {}, expect: 'ok', needs: 'sampling', without: { rpc: -32021 } },
  { tool: 'test_input_required_result_capabilities', args: {}, expect: 'ok' },
  { tool: 'test_input_required_result_elicitation', args: {}, expect: 'ok', needs: 'elicitation' },
  { tool: 'test_input_required_result_list_roots', args: {}, expect: 'ok', needs: 'roots' },
  { tool: 'test_input_required_result_multi_round', args: {}, expect: 'ok', needs: 'elicitation' },
  { tool: 'test_input_required_result_multiple_inputs', args: {}, expect: 'ok', needs: 'sampling' },
  { tool: 'test_input_required_result_request_state', args: {}, expect: 'ok' },
  { tool: 'test_input_required_result_sampling', args: {}, expect: 'ok', needs: 'sampling' },
  { tool: 'test_input_required_result_tampered_state', args: {}, expect: 'ok' },
  // Tools that require a task: a client that cannot make one is told so (-32601).
  { tool: 'test_tool_with_task', args: {}, expect: 'ok', needs: ['tasks', 'elicitation'], without: { rpc: -32601 } },
  // Its failure has no documented code: any clear error result.
  { tool: 'failing_job', args: {}, expect: 'error', needs: 'tasks', without: { rpc: -32601 } },
  { tool: 'protocol_error_job', args: {}, expect: { rpc: -32603 } },
  { tool: 'test_trigger_tool_change', args: {}, expect: 'ok' },
  { tool: 'test_trigger_prompt_change', args: {}, expect: 'ok' },
  { tool: 'test_trigger_resource_update', args: {}, expect: 'ok' },
];

export const source = {
  name: 'conformance',
  packs: 'conformance',
  // test_trigger_tool_change adds it to a shared HTTP server's list for later cells.
  mayAppear: ['test_dynamic_tool'],
  cases: CONFORMANCE_CASES,
};
