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
struct Section;
}

namespace toolport::providers {

struct SourceKind {
    std::string name;
    std::string summary;  // one line for `toolport config` and error messages
    // Builds the source from its settings (reads and checks them; throws SettingsError).
    std::function<std::unique_ptr<Source>(const SourceSettings&)> make;
    // Whether it may be used in this process (the testing pack needs TOOLPORT_TEST_PACK=1).
    std::function<bool()> available = [] { return true; };
    // Configured as named instances under the top-level key of the kind's name (`rest:`,
    // `openapi:`), not listed in `packs:`.
    bool named_instances = false;
    // Where the configuration file holds its settings: `packs.<name>` for a pack; for a kind
    // of named instances, its own top-level keys (`rest`, `openapi`; the gateway's
    // `upstreams` and `gateway`, which together make its one instance).
    std::vector<std::string> config_keys;
    // The keys of its section (`packs.<name>`, `openapi.<name>`, ...), declared in its folder:
    // for the JSON Schema and docs/configuration.md. nullptr: not declared (yet), its section
    // is published as an open mapping.
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
// A kind configured as named instances ("rest", "openapi"); nullptr for any other name.
const SourceKind* find_instance_kind(std::string_view kind);
// Every kind declared, packs and kinds of named instances, available in this process or
// not, in name order.
std::vector<const SourceKind*> all_source_kinds();

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
