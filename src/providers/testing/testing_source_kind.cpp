// The `testing` pack (testing_pack.cpp): offered only when TOOLPORT_TEST_PACK=1, as its tools
// misbehave on purpose.
// Found by src/providers/sources.cmake (see source_table.hpp).
#include <cstdlib>
#include <memory>
#include <string_view>

#include "providers/source_table.hpp"

namespace toolport::providers {

// Its table of settings (the JSON Schema, docs/configuration.md and the reader use it).
const config::Section& testing_settings_table();
std::unique_ptr<Source> make_testing_source(const SourceSettings& settings);

SourceKind testing_source_kind() {
    return {
        .name = "testing",
        .summary = "tools that misbehave on demand, for the pipeline's tests (TOOLPORT_TEST_PACK=1)",
        .make = make_testing_source,
        .available =
            [] {
                const char* flag = std::getenv("TOOLPORT_TEST_PACK");
                return flag && std::string_view(flag) == "1";
            },
        .settings = &testing_settings_table(),
    };
}

}  // namespace toolport::providers
