// Internal to the tango pack: what its tools share (settings, the HTTP client, the
// common shape of a handler and of the schemas), and one factory per tool, each in its
// own file: search_contracts.cpp, search_grants.cpp, vendor_profile.cpp,
// search_opportunities.cpp, spending_summary.cpp.
#pragma once

#include <functional>
#include <string>

#include "providers/source.hpp"
#include "providers/tango/envelope.hpp"
#include "providers/tango/tango_api.hpp"
#include "providers/tango/tango_settings.hpp"

namespace toolport::tango {

struct TangoPack {
    TangoSettings settings;
    http_client::HttpClient* http = nullptr;
};

// The service name the pipeline knows Tango by (rate limit, breaker, /health).
inline constexpr const char* kService = "tango";

// A tool's own work: check the arguments, ask Tango (through `call`), build the envelope.
using ToolBody = std::function<Task<Json>(TangoCall& call, const Json& args)>;

// The declaration every tango tool shares: read-only and open-world hints, the "tango"
// service, the envelope's execution block filled in, `_meta.downstream_api_calls` set,
// and cached copies marked as cached.
providers::ToolDeclaration tango_tool(TangoPack& pack, std::string name, std::string title, std::string description,
                                      Json input_schema, Json record_schema, ToolBody body);

// An optional part of an answer that Tango refused while the rest succeeded (a vendor's
// recent contracts, the metrics a summary would have used): {error_code, error,
// suggestion, transient, retry_after_ms?}, and its schema.
Json part_error(const ToolError& error);
Json part_error_schema(const std::string& description);

// `schema` with each [X, "null"] type as X and such properties no longer required: the
// form the answers take once drop_nulls has left out what had no value. Every tool's
// output schema goes through it.
Json portable_schema(Json schema);

// Schema pieces.
Json string_property(const std::string& description);
Json api_key_property();
Json limit_property(int fallback, int max);
Json cursor_property(const std::string& how);
// A fiscal year (1990-2100) whose example is a recent year: clients and the validation
// stage offer a schema's example (else its minimum) to a model that got it wrong.
Json fiscal_year_property(const std::string& description);
// `property` with `example` as its JSON Schema `examples`.
Json with_example(Json property, Json example);
Json object_schema(Json properties);
// Output schema pieces for the normalized records (every field may be null; the
// declared output schema leaves such fields out instead: portable_schema).
Json nullable(const char* type);
Json required_object(Json properties);  // an object schema with every property required
Json coded_schema();                    // {code, description} or null: NAICS, PSC, set-aside
Json place_schema();                    // {city, state, country, zip} or null
Json agency_schema();                   // {name, code, department, office: {name, code}} or null

providers::ToolDeclaration search_contracts_tool(TangoPack& pack);
providers::ToolDeclaration search_grants_tool(TangoPack& pack);
providers::ToolDeclaration vendor_profile_tool(TangoPack& pack);
providers::ToolDeclaration search_opportunities_tool(TangoPack& pack);
providers::ToolDeclaration spending_summary_tool(TangoPack& pack);

}  // namespace toolport::tango
