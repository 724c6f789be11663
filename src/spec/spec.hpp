// YAML integration specs for MCP servers: the format of mcp-server-kit ("one spec per file",
// tool / prompt / resource calls with declarative assertions), loaded, run against a Target and
// reported. Independent of transports: `toolport test` adapts an MCP client to Target.
//
// Typical use:
//   auto loaded = spec::load_spec_files(spec::collect_spec_files({"tests/specs"}));
//   auto summary = spec::run_specs(loaded, [&](const std::string&) -> spec::Target& { return target; });
//   spec::print_report(summary, std::cout);
//   return spec::exit_status(summary);
//
// A spec file (YAML, or JSON with the same keys):
//   name: Echo says hello                 # required
//   description: optional text
//   type: tool                            # tool | prompt | resource; may be omitted when `tool:` is given
//   tool: echo                            # prompt: `prompt: NAME`, resource: `uri: URI`
//   arguments: {message: hello}           # required for a tool ({} for none), optional for a prompt
//   timeout: 10000                        # ms, optional (RunOptions::default_timeout otherwise)
//   skip: false                           # reported as skipped
//   only: false                           # when any loaded spec has it, only those run
//   assertions: [ {type: success}, {type: contains_text, text: hello} ]
//
// A file whose top level has `tests:` is a suite: {name, description?, tests: [path | inline
// spec], setup?: {serverUrl?}}. Paths are relative to the suite file's folder and must name
// spec files (suites do not nest). A spec file that is both listed by a loaded suite and
// loaded on its own runs once, as part of the suite.
//
// Unknown keys and values of the wrong type are errors (mcp-server-kit drops unknown keys
// silently). Assertion types are listed in assertions/registry.cpp, each defined (keys and
// check) in its own file under assertions/. The semantics worth knowing:
//  - The response text is every `text` content block of a tool result (prompt: every text
//    message; resource: every text content) joined with "\n". When the call itself failed (a
//    JSON-RPC error, a timeout, a lost connection), the response text is the error message.
//  - `success` passes when the call returned a result that is not `isError: true`; `error`
//    passes when it is `isError: true` or the call failed; messageContains is matched
//    case-insensitively (ASCII letters) against the response text, and for a failed call also
//    against "JSON-RPC error CODE: message".
//  - The response document, for json_path, snapshot and json_schema, is the response text
//    parsed as JSON for a tool, and the result object itself for a prompt or a resource
//    (as in mcp-server-kit). A snapshot of a tool whose text is not JSON stores the text.
//  - json_path: `$.a.b`, `$.arr[0]`, `$.arr[-1]`, `$['key with.dots']`, `$.arr[*]` /
//    `$.obj.*` (all elements; later segments apply to each and the matches form an array).
//    Without `expected` the path must exist; with it the value must be deeply equal (numbers
//    by value: 1 equals 1.0).
//  - regex_match: ECMAScript syntax over code points; flags i (ignore case), m (multiline),
//    s (dot matches newlines), y (match at the start), g, u and d (no effect on a test).
//    An invalid pattern or flag fails the assertion with the reason.
//  - snapshot: `file` names `__snapshots__/<file>` in the spec's folder. The first run writes
//    it (and passes); later runs compare deeply; `ignoreFields` keys are removed at every
//    depth from both sides before comparing (and are not stored); RunOptions::update_snapshots
//    rewrites the file.
//  - json_schema: `schema` is a JSON (or YAML) file relative to the spec's folder, validated
//    with Toolport's JSON Schema validator (draft-07 or 2020-12, the default).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "util/json.hpp"

namespace toolport::spec {

// ---- The model -------------------------------------------------------------------------

enum class SpecKind { tool, prompt, resource };
const char* to_string(SpecKind kind);

struct Assertion {
    std::string type;  // "success", "json_path", ... (see assertions/registry.cpp)
    Json params;       // the assertion's other keys, already checked against its type
};

struct Spec {
    std::string name;
    std::string description;
    SpecKind kind = SpecKind::tool;
    std::string target;  // tool name, prompt name or resource URI
    Json arguments = Json::object();
    std::optional<std::chrono::milliseconds> timeout;
    bool skip = false;
    bool only = false;
    std::vector<Assertion> assertions;

    std::filesystem::path file;    // the file it was written in (a suite's file for inline specs)
    std::filesystem::path folder;  // what snapshot and json_schema paths are relative to
    std::string suite;             // name of the suite it belongs to, if any
    std::string server_url;        // the suite's setup.serverUrl, if any
};

// A spec (or a whole file) that could not be loaded. It counts as a failed spec; the others
// still run.
struct LoadError {
    std::filesystem::path file;
    std::string name;                   // the spec's name, or the file (and entry) when it has none
    std::vector<std::string> problems;  // each "FILE:LINE: KEY: what is wrong"
};

struct LoadedSpecs {
    // In file order, specs and load errors interleaved as they were found.
    std::vector<std::variant<Spec, LoadError>> entries;
    std::size_t spec_count() const;
};

// ---- Loading -----------------------------------------------------------------------------

// Expands directories (recursively; hidden folders and __snapshots__ are skipped) into their
// *.yaml and *.yml files, sorted by path; files are kept as given. A path that does not exist
// becomes a LoadError entry rather than an exception.
struct CollectedFiles {
    std::vector<std::filesystem::path> files;
    std::vector<LoadError> errors;
};
CollectedFiles collect_spec_files(const std::vector<std::filesystem::path>& paths);

// Loads spec and suite files (.yaml, .yml or .json). Never throws for bad input: every
// problem becomes a LoadError naming the file, line and key.
LoadedSpecs load_spec_files(const std::vector<std::filesystem::path>& files);
LoadedSpecs load_spec_files(const CollectedFiles& collected);

// Loads one document given as text (`file` names it in messages and anchors relative paths).
LoadedSpecs load_spec_text(const std::string& text, const std::filesystem::path& file);

// ---- What specs run against --------------------------------------------------------------

// An MCP server reached somehow. Each call returns the JSON-RPC result object and throws on
// anything else: a JSON-RPC error (ideally as TargetError with its code), a timeout, a broken
// transport. A throw is the call's failure outcome, not a runner error.
class Target {
public:
    virtual ~Target() = default;
    // All tools (every page), as the array of tool definitions.
    virtual Json list_tools() = 0;
    virtual Json call_tool(const std::string& name, const Json& arguments, std::chrono::milliseconds timeout) = 0;
    virtual Json get_prompt(const std::string& name, const Json& arguments, std::chrono::milliseconds timeout) = 0;
    virtual Json read_resource(const std::string& uri, std::chrono::milliseconds timeout) = 0;
};

// What a Target throws for a JSON-RPC error response.
class TargetError : public std::runtime_error {
public:
    TargetError(int code, const std::string& message, Json data = nullptr);
    int code() const { return code_; }
    const Json& data() const { return data_; }

private:
    int code_;
    Json data_;
};

// ---- Running -----------------------------------------------------------------------------

struct AssertionResult {
    std::string type;
    bool passed = false;
    std::string message;  // why it failed, or what it checked
};

struct SpecResult {
    enum class Status { passed, failed, skipped };
    Status status = Status::failed;
    std::string name;
    std::filesystem::path file;
    std::string suite;
    std::chrono::milliseconds elapsed{0};
    std::vector<AssertionResult> assertions;
    std::vector<std::string> problems;  // failures that are not one assertion's (load errors, hints)
    std::vector<std::string> notes;     // e.g. "wrote snapshot __snapshots__/x.json"
};

struct RunOptions {
    std::chrono::milliseconds default_timeout{30000};
    bool update_snapshots = false;
    // The clock response times are measured with (tests substitute a fake one).
    std::function<std::chrono::steady_clock::time_point()> now = [] { return std::chrono::steady_clock::now(); };
    // Called with each result as soon as it is known (to print progress); may be empty.
    std::function<void(const SpecResult&)> on_result;
};

struct RunSummary {
    std::vector<SpecResult> results;
    std::size_t passed = 0;
    std::size_t failed = 0;
    std::size_t skipped = 0;
};

// Resolves the Target for a spec's server URL ("" when the spec names none). Called once per
// spec that runs; may throw, which fails that spec.
using TargetResolver = std::function<Target&(const std::string& server_url)>;

// Runs every loaded spec in order (only the `only: true` ones when there are any), one at a
// time. Load errors become failed results in their place.
RunSummary run_specs(const LoadedSpecs& loaded, const TargetResolver& resolve, const RunOptions& options = {});
// Runs one spec (skip and only are the caller's business here).
SpecResult run_spec(const Spec& spec, Target& target, const RunOptions& options = {});

// ---- Reporting ---------------------------------------------------------------------------

// One block per result:
//   ✓ name (12 ms)
//   ✗ name (8 ms)
//       contains_text: response does not contain "hello"
//   - name (skipped)
// then "K skipped" when K > 0, and last exactly "N passed, N failed".
void print_report(const RunSummary& summary, std::ostream& out);
void print_result(const SpecResult& result, std::ostream& out);
void print_totals(const RunSummary& summary, std::ostream& out);
// The same as one JSON document: {"results": [...], "passed": N, "failed": N, "skipped": N}.
Json report_json(const RunSummary& summary);

// 0 when specs ran and none failed; 1 when any failed or none were found.
int exit_status(const RunSummary& summary);

}  // namespace toolport::spec
