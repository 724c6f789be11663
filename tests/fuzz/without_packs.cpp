// The fuzz build's core leaves out the tango and context packs, REST catalogs, OpenAPI
// sources and the downstream HTTP client's network code (no fuzzer loads them, and they
// are slow to compile with coverage and sanitizers). The source table still names the packs; in a fuzzer, asking for one is
// refused like any source that cannot start.
#include <memory>
#include <stdexcept>

#include "providers/source.hpp"
#include "providers/source_settings.hpp"

namespace toolport::providers {

std::unique_ptr<Source> make_tango_source(const SourceSettings&) {
    throw std::invalid_argument("the tango pack is not part of the fuzz build");
}

std::unique_ptr<Source> make_context_source(const SourceSettings&) {
    throw std::invalid_argument("the context pack is not part of the fuzz build");
}

}  // namespace toolport::providers

namespace toolport::providers {

std::unique_ptr<Source> make_rest_catalog_source(const SourceSettings&) {
    throw std::invalid_argument("REST catalogs are not part of the fuzz build");
}

std::unique_ptr<Source> make_openapi_source(const SourceSettings&) {
    throw std::invalid_argument("OpenAPI sources are not part of the fuzz build");
}

std::unique_ptr<Source> make_gateway_source(const SourceSettings&) {
    throw std::invalid_argument("the gateway is not part of the fuzz build");
}

}  // namespace toolport::providers
