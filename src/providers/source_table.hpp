// The sources Toolport knows, by name: what `packs:` in the configuration and `--packs`
// on the command line choose from, and the kinds configured once per instance under
// their own key (`rest:` catalogs, `openapi:` documents), each instance named by the
// user.
//
// Each kind declares itself in its own folder: src/providers/<folder>/<stem>_source_kind.cpp
// defines `SourceKind <stem>_source_kind()` in this namespace (say tango/tango_source_kind.cpp,
// `tango_source_kind()`). src/providers/sources.cmake finds those files and generates the
// list that calls each one (build/generated/source_kinds.cpp), so adding a source is its
// folder alone: no central file names it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "providers/source.hpp"

namespace toolport {
class McpServer;
}
namespace toolport::config {
struct Key;
struct Section;
}  // namespace toolport::config

namespace toolport::providers {

struct SourceKind {
    std::string name;
    std::string summary;  // one line for `toolport config` and error messages
    // Builds the source from its settings (reads and checks them; throws SettingsError).
    std::function<std::unique_ptr<Source>(const SourceSettings&)> make;
    // Whether it may be used in this process (the testing pack needs TOOLPORT_TEST_PACK=1).
    std::function<bool()> available = [] { return true; };
    // Configured as named instances under top-level keys of its own (`rest:`, `openapi:`),
    // not listed in `packs:`.
    bool named_instances = false;
    // A kind of named instances: the top-level keys of the configuration file that hold its
    // settings, declared in its folder. The loader reads them, and the file's JSON Schema and
    // docs/configuration.md list them. Each is a mapping of instance names to settings
    // (`rest: {name: {...}}`), unless the kind has a single instance.
    std::vector<const config::Key*> file_keys;
    // One instance, named after the kind, whose settings gather all of `file_keys`: the key
    // named as the kind gives the top level, each other key its entry of the same name
    // (`gateway:` and `upstreams:` make the gateway's {prefix_mode: ..., upstreams: {...}}).
    bool single_instance = false;
    // Top-level keys it reads but does not own (declared in the server's own table, where
    // other parts read them too): the gateway reads `registry:`'s url, timeout and size cap
    // for its registry upstreams, beside `registry.serve`. A single instance's settings get
    // the entries of each that the key's table declares; they never make the instance.
    std::vector<const config::Key*> shared_file_keys;
    // The keys of its settings (`packs.<name>`, each of `openapi:`, ...), declared in its
    // folder: what its reader checks, and what the JSON Schema and docs/configuration.md
    // publish.
    const config::Section* settings = nullptr;
};

// The available packs (sources listed in `packs:`), in name order.
std::vector<const SourceKind*> source_kinds();
// nullptr when no available pack has that name.
const SourceKind* find_source_kind(std::string_view name);
// "conformance, tango, ..." for messages.
std::string source_names();
// 'unknown pack "tnago" (did you mean "tango"?) (known: conformance, ...)': for packs: and --packs.
std::string unknown_pack_message(std::string_view name);
// A kind configured as named instances ("rest", "openapi", "gateway"); nullptr for any
// other name.
const SourceKind* find_instance_kind(std::string_view kind);
// Every kind declared, packs and kinds of named instances, available in this process or
// not, in name order.
std::vector<const SourceKind*> all_source_kinds();
// The kinds of named instances, in name order, those of a single instance last (the file's
// sources start in this order: the gateway after every `rest:` and `openapi:` source).
std::vector<const SourceKind*> instance_kinds();

// A started source together with the context it was given (the context must outlive it).
// Destruction stops the source.
class RunningSource {
public:
    RunningSource(std::unique_ptr<SourceContext> context, std::unique_ptr<Source> source);
    ~RunningSource();
    RunningSource(RunningSource&&) = default;
    Source& source() { return *source_; }
    const Source& source() const { return *source_; }
    SourceContext& context() { return *context_; }
    const SourceContext& context() const { return *context_; }

private:
    std::unique_ptr<SourceContext> context_;
    std::unique_ptr<Source> source_;
};

// Builds source `kind` from `settings` and starts it on `server` under `instance_name`
// (the kind's name when empty); what it registers at start reaches clients as one
// list_changed. Throws SettingsError or SourceError.
RunningSource start_source(const SourceKind& kind, McpServer& server, const SourceSettings& settings,
                           SourceServices services, const std::string& instance_name = {});

// The same by name, for tests, fuzzers and benchmarks: any source in the table, available
// in this process or not, without health reports or a downstream HTTP client unless
// given. Throws SourceError for a name not in the table.
RunningSource start_source(const std::string& name, McpServer& server, const SourceSettings& settings = {},
                           SourceServices services = {});

}  // namespace toolport::providers
