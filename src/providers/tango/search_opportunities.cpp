// search_tango_opportunities → GET /api/opportunities/ (SAM.gov solicitations), or
// GET /api/forecasts/ (agencies' planned procurements) when source is "forecasts". Both
// use page-number pagination.
#include <cctype>

#include "providers/tango/records.hpp"
#include "providers/tango/tango_pack.hpp"
#include "providers/tango/validation.hpp"

namespace toolport::tango {

namespace {

Json input_schema() {
    return object_schema({
        {"api_key", api_key_property()},
        {"source",
         {{"type", "string"},
          {"enum", {"opportunities", "forecasts"}},
          {"default", "opportunities"},
          {"description", "opportunities: solicitations on SAM.gov; forecasts: procurements agencies plan"}}},
        {"query", string_property("Free-text search. Example: 'HVAC maintenance'")},
        {"agency", string_property("Agency or department: code, name or abbreviation. Example: 'DHS'")},
        {"naics_code", string_property("NAICS code, 2-6 digits (forecasts: a shorter code matches as a prefix)")},
        {"psc_code", string_property("Product/Service Code, 4 characters (opportunities only)")},
        {"set_aside_type",
         string_property("Set-aside code or program name, as in search_tango_contracts (opportunities only)")},
        {"notice_type", string_property("SAM.gov notice type code (opportunities only): p presolicitation, o "
                                        "solicitation, k combined synopsis/solicitation, r sources sought, s special "
                                        "notice, a award notice")},
        {"solicitation_number", string_property("Solicitation number (opportunities only). Example: 'N0018926QL330'")},
        {"posted_date_start",
         with_example(string_property(
                          "First posted on or after, YYYY-MM-DD (opportunities only). Example: '2025-01-01'"),
                      "2025-01-01")},
        {"posted_date_end",
         with_example(string_property(
                          "First posted on or before, YYYY-MM-DD (opportunities only). Example: '2025-06-30'"),
                      "2025-06-30")},
        {"response_deadline_start",
         with_example(string_property(
                          "Responses due on or after, YYYY-MM-DD (opportunities only). Example: '2025-07-01'"),
                      "2025-07-01")},
        {"response_deadline_end",
         with_example(string_property(
                          "Responses due on or before, YYYY-MM-DD (opportunities only). Example: '2025-12-31'"),
                      "2025-12-31")},
        {"place_of_performance",
         string_property("Place of performance text, e.g. a state or city (opportunities only)")},
        {"active",
         {{"type", "boolean"},
          {"default", true},
          {"description", "Only open solicitations (default true; false: closed ones too)"}}},
        {"fiscal_year", fiscal_year_property("Fiscal year of the planned award (forecasts only)")},
        {"ordering",
         {{"type", "string"},
          {"description",
           "opportunities: first_notice_date (or its alias posted_date), last_notice_date, "
           "response_deadline; "
           "forecasts: anticipated_award_date, fiscal_year, title; '-' for descending"}}},
        {"limit", limit_property(10, 100)},
        {"cursor", cursor_property("It looks like 'page:2'.")},
    });
}

// Tango's opportunities accept posted_date as an alias of first_notice_date; it is sent as
// the field it stands for.
std::optional<std::string> opportunity_ordering(const Json& args) {
    auto ordering = choice_arg(args, "ordering",
                               {"first_notice_date", "posted_date", "last_notice_date", "response_deadline"}, true);
    if (!ordering) return ordering;
    const bool descending = ordering->front() == '-';
    if (ordering->substr(descending ? 1 : 0) == "posted_date")
        return std::string(descending ? "-" : "") + "first_notice_date";
    return ordering;
}

Json record_schema() {
    Json opportunity = object_schema({{"opportunity_id", nullable("string")},
                                      {"title", nullable("string")},
                                      {"solicitation_number", nullable("string")},
                                      {"notice_type", nullable("string")},
                                      {"active", nullable("boolean")},
                                      {"agency", agency_schema()},
                                      {"first_notice_date", nullable("string")},
                                      {"last_notice_date", nullable("string")},
                                      {"response_deadline", nullable("string")},
                                      {"naics", coded_schema()},
                                      {"psc", coded_schema()},
                                      {"set_aside", coded_schema()},
                                      {"place_of_performance", place_schema()},
                                      {"sam_url", nullable("string")},
                                      {"description", nullable("string")}});
    Json forecast = object_schema({{"forecast_id", nullable("integer")},
                                   {"title", nullable("string")},
                                   {"agency", nullable("string")},
                                   {"source_system", nullable("string")},
                                   {"anticipated_award_date", nullable("string")},
                                   {"fiscal_year", nullable("integer")},
                                   {"naics_code", nullable("string")},
                                   {"set_aside", nullable("string")},
                                   {"status", nullable("string")}});
    // Fields without a value are left out, so the two are told apart by their keys alone.
    opportunity["additionalProperties"] = false;
    forecast["additionalProperties"] = false;
    return {{"description", "An opportunity or, with source forecasts, a forecast"},
            {"anyOf", Json::array({std::move(opportunity), std::move(forecast)})}};
}

Task<Json> forecasts(TangoCall& call, const Json& args) {
    const int limit = int_arg(args, "limit", 10, 1, 100);
    const int page = page_cursor_arg(args);
    Query q;
    q.add("search", text_arg(args, "query"), "query").add("agency", text_arg(args, "agency", 120), "agency");
    if (auto naics = naics_arg(args, "naics_code")) {
        q.add(naics->size() == 6 ? "naics_code" : "naics_starts_with", naics, "naics_code");
    }
    q.add("fiscal_year", fiscal_year_arg(args), "fiscal_year")
        .add("ordering", choice_arg(args, "ordering", {"anticipated_award_date", "fiscal_year", "title"}, true),
             "ordering");
    Json filters = q.filters();
    filters["source"] = "forecasts";
    q.add("limit", std::optional<int>(limit))
        .add("page", std::optional<int>(page))
        .add("shape", std::string(kForecastShape));
    Json body = co_await call.get("/api/forecasts/", q);
    Page result = read_numbered_page(body, page);
    Json data = Json::array();
    for (const auto& row : result.rows) data.push_back(to_json(parse_forecast(row)));
    co_return envelope(std::move(data), result.total, std::move(filters), limit, result.next_cursor, {},
                       call.requests());
}

Task<Json> opportunities(TangoCall& call, const Json& args) {
    const auto [posted_start, posted_end] = date_range_arg(args, "posted_date_start", "posted_date_end");
    const auto [due_start, due_end] = date_range_arg(args, "response_deadline_start", "response_deadline_end");
    const int limit = int_arg(args, "limit", 10, 1, 100);
    const int page = page_cursor_arg(args);
    const bool active = bool_arg(args, "active").value_or(true);
    auto notice_type = text_arg(args, "notice_type", 2);
    if (notice_type && (notice_type->size() != 1 || !std::isalpha(static_cast<unsigned char>((*notice_type)[0])))) {
        throw ToolError(ToolErrorCode::invalid_format, "notice_type must be one SAM.gov notice type letter")
            .parameter("notice_type")
            .provided(*notice_type)
            .example("o");
    }
    Query q;
    q.add("search", text_arg(args, "query"), "query")
        .add("agency", text_arg(args, "agency", 120), "agency")
        .add("naics", naics_arg(args, "naics_code"), "naics_code")
        .add("psc", psc_arg(args, "psc_code"), "psc_code")
        .add("set_aside", set_aside_arg(args, "set_aside_type"), "set_aside_type")
        .add("notice_type", notice_type, "notice_type")
        .add("solicitation_number", text_arg(args, "solicitation_number", 60), "solicitation_number")
        .add("first_notice_date_after", posted_start, "posted_date_start")
        .add("first_notice_date_before", posted_end, "posted_date_end")
        .add("response_deadline_after", due_start, "response_deadline_start")
        .add("response_deadline_before", due_end, "response_deadline_end")
        .add("place_of_performance", text_arg(args, "place_of_performance", 100), "place_of_performance")
        .add("active", std::string(active ? "true" : "false"))
        .add("ordering", opportunity_ordering(args), "ordering");
    Json filters = q.filters();
    filters["active"] = active;
    filters["source"] = "opportunities";
    // No `shape`: shaping opportunities is a paid-plan feature of the API; the default
    // record has what the normalizer reads.
    q.add("limit", std::optional<int>(limit)).add("page", std::optional<int>(page));
    Json body = co_await call.get("/api/opportunities/", q);
    Page result = read_numbered_page(body, page);
    Json data = Json::array();
    for (const auto& row : result.rows) data.push_back(to_json(parse_opportunity(row)));
    co_return envelope(std::move(data), result.total, std::move(filters), limit, result.next_cursor, {},
                       call.requests());
}

Task<Json> search(TangoCall& call, const Json& args) {
    auto source = choice_arg(args, "source", {"opportunities", "forecasts"}).value_or("opportunities");
    if (source == "forecasts") co_return co_await forecasts(call, args);
    co_return co_await opportunities(call, args);
}

}  // namespace

providers::ToolDeclaration search_opportunities_tool(TangoPack& pack) {
    return tango_tool(
        pack, "search_tango_opportunities", "Search contract opportunities and forecasts",
        "Search federal contract opportunities (solicitations, sources sought, presolicitations on SAM.gov) through "
        "the "
        "Tango API, or with source 'forecasts' the procurements agencies plan to buy. Opportunities give "
        "opportunity_id, title, solicitation number, notice type, agency and office, first and last notice dates, "
        "response deadline, NAICS, PSC, set-aside, place of performance, SAM.gov link and a description excerpt; "
        "forecasts give title, agency, anticipated award date, fiscal year, NAICS, set-aside and status. Filters: "
        "query, agency, naics_code, psc_code, set_aside_type, notice_type, solicitation_number, posted and response "
        "deadline ranges (YYYY-MM-DD), place_of_performance, active (default: open only); forecasts: query, agency, "
        "naics_code, fiscal_year. Up to 100 per call; pass pagination.next_cursor back as cursor for more. Related: "
        "search_tango_contracts for what was awarded.",
        input_schema(), record_schema(), search);
}

}  // namespace toolport::tango
