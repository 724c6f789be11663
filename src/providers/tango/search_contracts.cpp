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
        {"query",
         with_example(string_property("Free-text search over contract descriptions. Example: 'cloud migration'"),
                      "cloud migration")},
        {"vendor_name",
         with_example(string_property(
                          "Vendor (recipient) name, partial and case-insensitive. Example: 'Lockheed Martin'"),
                      "Lockheed Martin")},
        {"vendor_uei",
         with_example(string_property(
                          "The vendor's Unique Entity ID: 12 characters, letters and digits without O or I. "
                          "Example: 'N553JH75Z8K1'"),
                      "N553JH75Z8K1")},
        {"awarding_agency", string_property("Awarding agency by code, name or abbreviation. Examples: '9700', 'DOD', "
                                            "'General Services Administration'")},
        {"funding_agency", string_property("Funding agency, same forms as awarding_agency")},
        {"naics_code",
         with_example(string_property("NAICS industry code, 2-6 digits. Example: '541512' (computer systems design)"),
                      "541512")},
        {"psc_code",
         with_example(string_property("Product/Service Code, 4 characters. Example: 'D302' (IT systems development)"),
                      "D302")},
        {"award_date_start",
         with_example(string_property("Earliest award date, YYYY-MM-DD. Example: '2025-01-01'"), "2025-01-01")},
        {"award_date_end",
         with_example(string_property("Latest award date, YYYY-MM-DD. Example: '2025-06-30'"), "2025-06-30")},
        {"fiscal_year", fiscal_year_property("Federal fiscal year (FY2025 = 2024-10-01 to 2025-09-30)")},
        {"set_aside_type",
         string_property("Set-aside: an FPDS code (SBA, SBP, 8A, 8AN, HZC, HZS, SDVOSBC, SDVOSBS, WOSB, "
                         "EDWOSB, VSA, ...) or a program name (Small Business, 8(a), HUBZone, SDVOSB, "
                         "WOSB, VOSB); several joined with commas")},
        {"min_obligated",
         {{"type", "number"},
          {"minimum", 0},
          {"examples", {100000}},
          {"description", "Only awards with at least this many dollars obligated. Example: 100000"}}},
        {"ordering",
         {{"type", "string"},
          {"enum",
           {"award_date", "-award_date", "obligated", "-obligated", "total_contract_value", "-total_contract_value"}},
          {"description", "Sort order; '-' for descending. Default: the API's (newest first)"}}},
        {"limit", limit_property(10, 100)},
        {"cursor", cursor_property("Cursors are opaque strings.")},
    });
}

Json record_schema() {
    return object_schema(
        {{"contract_id", nullable("string")},
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

Task<Json> search(TangoCall& call, const Json& args) {
    const auto [start, end] = date_range_arg(args, "award_date_start", "award_date_end");
    const int limit = int_arg(args, "limit", 10, 1, 100);
    Query q;
    q.add("search", text_arg(args, "query"), "query")
        .add("recipient", text_arg(args, "vendor_name"), "vendor_name")
        .add("uei", uei_arg(args, "vendor_uei"), "vendor_uei")
        .add("awarding_agency", text_arg(args, "awarding_agency", 120), "awarding_agency")
        .add("funding_agency", text_arg(args, "funding_agency", 120), "funding_agency")
        .add("naics", naics_arg(args, "naics_code"), "naics_code")
        .add("psc", psc_arg(args, "psc_code"), "psc_code")
        .add("award_date_gte", start, "award_date_start")
        .add("award_date_lte", end, "award_date_end")
        .add("fiscal_year", fiscal_year_arg(args), "fiscal_year")
        .add("set_aside", set_aside_arg(args, "set_aside_type"), "set_aside_type");
    const auto min = number_arg(args, "min_obligated", 0);
    if (min) q.add("obligated_gte", Json(*min).dump());
    q.add("ordering", choice_arg(args, "ordering", kOrdering, true), "ordering");
    Json filters = q.filters();
    if (min) filters["min_obligated"] = *min;
    q.add("limit", std::optional<int>(limit))
        .add("cursor", keyset_cursor_arg(args))
        .add("shape", std::string(kContractShape));

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
        "award's contract_id (CONT_AWD_... key) and PIID, vendor (name, UEI), awarding agency and office, obligated "
        "and "
        "total value, award date and fiscal year, NAICS and PSC with descriptions, set-aside, place and period of "
        "performance. Filters: free text (query), vendor_name or vendor_uei, awarding/funding agency (code, name or "
        "abbreviation), naics_code (2-6 digits), psc_code (4 characters), award dates (YYYY-MM-DD), fiscal_year, "
        "set_aside_type, min_obligated; ordering by award_date, obligated or total_contract_value. Up to 100 per call; "
        "pass pagination.next_cursor back as cursor for more. Use get_tango_vendor_profile with a vendor.uei for the "
        "vendor's registration, and get_tango_spending_summary for totals.",
        input_schema(), record_schema(), search);
}

}  // namespace toolport::tango
