// The fuzz build's core leaves out the tango pack and the downstream HTTP client's network
// code (no fuzzer loads a web-API source, and they are the slowest files to compile with
// coverage and sanitizers). The source table still names the pack; in a fuzzer, asking for
// it is refused like any source that cannot start.
#include <memory>
#include <stdexcept>

#include "providers/source.hpp"
#include "providers/source_settings.hpp"

namespace toolport::providers {

std::unique_ptr<Source> make_tango_source(const SourceSettings&) {
    throw std::invalid_argument("the tango pack is not part of the fuzz build");
}

}  // namespace toolport::providers
