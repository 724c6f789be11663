// search_tango_contracts → GET /api/contracts/ (FPDS contract awards, keyset pagination).
#include "providers/tango/records.hpp"
#include "providers/tango/tango_pack.hpp"
#include "providers/tango/validation.hpp"

namespace toolport::tango {

namespace {

const std::vector<std::string> kOrdering = {"award_date", "obligated", "total_contract_value"};

Json input_schema() {
    return object_schema({
        {"api_key", api_key_property()},
        {"query", string_property("Free-text search over contract descriptions. Example: 'cloud migration'")},
        {"vendor_name", string_property("Vendor (recipient) name, partial and case-insensitive. Example: 'Lockheed Martin'")},
        {"vendor_uei", string_property("The vendor's Unique Entity ID: 12 characters, letters and digits without O or I. "
                                       "Example: 'N553JH75Z8K1'")},
        {"awarding_agency", string_property("Awarding agency by code, name or abbreviation. Examples: '9700', 'DOD', "
                                            "'General Services Administration'")},
        {"funding_agency", string_property("Funding agency, same forms as awarding_agency")},
        {"naics_code", string_property("NAICS industry code, 2-6 digits. Example: '541512' (computer systems design)")},
        {"psc_code", string_property("Product/Service Code, 4 characters. Example: 'D302' (IT systems development)")},
        {"award_date_start", string_property("Earliest award date, YYYY-MM-DD. Example: '2024-01-01'")},
        {"award_date_end", string_property("Latest award date, YYYY-MM-DD. Example: '2024-12-31'")},
        {"fiscal_year", {{"type", "integer"}, {"minimum", 1990}, {"maximum", 2100},
                         {"description", "Federal fiscal year (FY2024 = 2023-10-01 to 2024-09-30)"}}},
        {"set_aside_type", string_property("Set-aside: an FPDS code (SBA, SBP, 8A, 8AN, HZC, HZS, SDVOSBC, SDVOSBS, WOSB, "
                                           "EDWOSB, VSA, ...) or a program name (Small Business, 8(a), HUBZone, SDVOSB, "
                                           "WOSB, VOSB); several joined with commas")},
        {"min_obligated", {{"type", "number"}, {"minimum", 0}, {"description", "Only awards with at least this many dollars obligated"}}},
        {"ordering", {{"type", "string"},
                      {"enum", {"award_date", "-award_date", "obligated", "-obligated", "total_contract_value",
                                "-total_contract_value"}},
                      {"description", "Sort order; '-' for descending. Default: the API's (newest first)"}}},
        {"limit", limit_property(10, 100)},
        {"cursor", cursor_property("Cursors are opaque strings.")},
    });
}

Json record_schema() {
    return object_schema({{"contract_id", nullable("string")},
                          {"piid", nullable("string")},
                          {"description", nullable("string")},
                          {"award_date", nullable("string")},
                          {"fiscal_year", nullable("integer")},
                          {"vendor", required_object({{"name", nullable("string")}, {"uei", nullable("string")}})},
                          {"awarding_agency", agency_schema()},
                          {"obligated", nullable("number")},
                          {"total_contract_value", nullable("number")},
                          {"naics", coded_schema()},
                          {"psc", coded_schema()},
                          {"set_aside", coded_schema()},
                          {"place_of_performance", place_schema()},
                          {"period_of_performance", required_object({{"start_date", nullable("string")},
                                                                     {"end_date", nullable("string")},
                                                                     {"ultimate_completion_date", nullable("string")}})}});
}

std::optional<std::string> cursor_arg(const Json& args) {
    // Read one character past the longest cursor Tango hands out, so that a longer one is
    // refused instead of being cut into a different cursor.
    constexpr std::size_t kMaxCursor = 1000;
    auto cursor = text_arg(args, "cursor", kMaxCursor + 1);
    if (cursor && (cursor->size() > kMaxCursor ||
                   cursor->find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-") !=
                       std::string::npos)) {
        throw ToolError(ToolErrorCode::invalid_format, "cursor is not one this tool handed out")
            .parameter("cursor")
            .suggest("Pass pagination.next_cursor from the previous answer unchanged, or leave cursor out.");
    }
    return cursor;
}

Task<Json> search(TangoCall& call, const Json& args) {
    const auto [start, end] = date_range_arg(args, "award_date_start", "award_date_end");
    const int limit = int_arg(args, "limit", 10, 1, 100);
    Query q;
    q.add("search", text_arg(args, "query"))
        .add("recipient", text_arg(args, "vendor_name"))
        .add("uei", uei_arg(args, "vendor_uei"))
        .add("awarding_agency", text_arg(args, "awarding_agency", 120))
        .add("funding_agency", text_arg(args, "funding_agency", 120))
        .add("naics", naics_arg(args, "naics_code"))
        .add("psc", psc_arg(args, "psc_code"))
        .add("award_date_gte", start)
        .add("award_date_lte", end)
        .add("fiscal_year", optional_int_arg(args, "fiscal_year", 1990, 2100))
        .add("set_aside", set_aside_arg(args, "set_aside_type"));
    if (auto min = number_arg(args, "min_obligated", 0)) q.add("obligated_gte", Json(*min).dump());
    q.add("ordering", choice_arg(args, "ordering", kOrdering, true));
    Json filters = q.as_json();
    q.add("limit", std::optional<int>(limit)).add("cursor", cursor_arg(args)).add("shape", std::string(kContractShape));

    Json body = co_await call.get("/api/contracts/", q);
    Page page = read_cursor_page(body);
    Json data = Json::array();
    for (const auto& row : page.rows) data.push_back(to_json(parse_contract(row)));
    co_return envelope(std::move(data), page.total, std::move(filters), limit, page.next_cursor, {}, call.requests());
}

}  // namespace

providers::ToolDeclaration search_contracts_tool(TangoPack& pack) {
    return tango_tool(
        pack, "search_tango_contracts", "Search federal contract awards",
        "Search federal contract awards (FPDS definitive contracts and orders) through the Tango API. Returns each "
        "award's contract_id (CONT_AWD_... key) and PIID, vendor (name, UEI), awarding agency and office, obligated and "
        "total value, award date and fiscal year, NAICS and PSC with descriptions, set-aside, place and period of "
        "performance. Filters: free text (query), vendor_name or vendor_uei, awarding/funding agency (code, name or "
        "abbreviation), naics_code (2-6 digits), psc_code (4 characters), award dates (YYYY-MM-DD), fiscal_year, "
        "set_aside_type, min_obligated; ordering by award_date, obligated or total_contract_value. Up to 100 per call; "
        "pass pagination.next_cursor back as cursor for more. Use get_tango_vendor_profile with a vendor.uei for the "
        "vendor's registration, and get_tango_spending_summary for totals.",
        input_schema(), record_schema(), search);
}

}  // namespace toolport::tango
