// search_tango_grants → GET /api/grants/: Grants.gov funding opportunities (not assistance
// awards: Tango has no list of those), page-number pagination.
#include <cctype>

#include "providers/tango/records.hpp"
#include "providers/tango/tango_pack.hpp"
#include "providers/tango/validation.hpp"

namespace toolport::tango {

namespace {

const std::vector<std::string> kOrdering = {"posted_date", "deadline_current", "rank", "last_updated"};

Json input_schema() {
    return object_schema({
        {"api_key", api_key_property()},
        {"query", string_property("Free-text search over grant opportunities. Example: 'rural broadband'")},
        {"agency", string_property("Agency code or name. Examples: 'HHS', 'HHS-NIH11', 'Department of Energy'")},
        {"cfda_number", string_property("Assistance Listing (CFDA) number, or part of it. Example: '93.837'")},
        {"opportunity_number", string_property("Grants.gov opportunity number. Example: 'RFA-AG-28-009'")},
        {"status",
         {{"type", "string"},
          {"enum", {"posted", "forecasted"}},
          {"description", "posted (open for applications) or forecasted (announced ahead)"}}},
        {"posted_date_start",
         with_example(string_property("Posted on or after, YYYY-MM-DD. Example: '2025-01-01'"), "2025-01-01")},
        {"posted_date_end",
         with_example(string_property("Posted on or before, YYYY-MM-DD. Example: '2025-06-30'"), "2025-06-30")},
        {"response_date_start",
         with_example(string_property("Applications due on or after, YYYY-MM-DD. Example: '2025-07-01'"),
                      "2025-07-01")},
        {"response_date_end",
         with_example(string_property("Applications due on or before, YYYY-MM-DD. Example: '2025-12-31'"),
                      "2025-12-31")},
        {"funding_instruments", string_property("Funding instrument codes, comma-separated: G grant, CA cooperative "
                                                "agreement, PC procurement contract, O other")},
        {"funding_categories", string_property("Funding category codes, comma-separated. Examples: HL (health), ED "
                                               "(education), ST (science and technology), EN (energy)")},
        {"applicant_types", string_property("Eligible applicant type codes, comma-separated. Examples: 00 (state "
                                            "governments), 20 (private universities), 25 (others), 99 (unrestricted)")},
        {"ordering",
         {{"type", "string"},
          {"enum",
           {"posted_date", "-posted_date", "deadline_current", "-deadline_current", "rank", "-rank", "last_updated",
            "-last_updated"}},
          {"description", "Sort order; '-' for descending"}}},
        {"limit", limit_property(10, 100)},
        {"cursor", cursor_property("For grants it looks like 'page:2'.")},
    });
}

Json record_schema() {
    return object_schema({{"grant_id", {{"type", {"integer", "null"}}}},
                          {"opportunity_number", {{"type", {"string", "null"}}}},
                          {"title", {{"type", {"string", "null"}}}},
                          {"agency_code", {{"type", {"string", "null"}}}},
                          {"status", {{"type", {"object", "null"}}}},
                          {"cfda_numbers", {{"type", "array"}}},
                          {"funding", {{"type", "object"}}}});
}

// "G, CA" → "G|CA" (codes: letters and digits only).
std::optional<std::string> code_list_arg(const Json& args, const std::string& name) {
    auto value = text_arg(args, name, 100);
    if (!value) return std::nullopt;
    std::string out, code;
    auto flush = [&] {
        if (code.empty()) return;
        out += (out.empty() ? "" : "|") + code;
        code.clear();
    };
    for (char c : *value) {
        if (c == ',' || c == '|' || c == ' ') flush();
        else if (std::isalnum(static_cast<unsigned char>(c)))
            code += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        else
            throw ToolError(ToolErrorCode::invalid_format, name + " must be codes separated by commas")
                .parameter(name)
                .provided(*value)
                .example("G,CA");
    }
    flush();
    if (out.empty()) return std::nullopt;
    return out;
}

Task<Json> search(TangoCall& call, const Json& args) {
    const auto [posted_start, posted_end] = date_range_arg(args, "posted_date_start", "posted_date_end");
    const auto [due_start, due_end] = date_range_arg(args, "response_date_start", "response_date_end");
    const int limit = int_arg(args, "limit", 10, 1, 100);
    const int page = page_cursor_arg(args);
    const auto status = choice_arg(args, "status", {"posted", "forecasted"});
    Query q;
    q.add("search", text_arg(args, "query"), "query")
        .add("agency", text_arg(args, "agency", 120), "agency")
        .add("cfda_number", text_arg(args, "cfda_number", 20), "cfda_number")
        .add("opportunity_number", text_arg(args, "opportunity_number", 60), "opportunity_number")
        .add("status", status ? std::optional<std::string>(*status == "posted" ? "P" : "F") : std::nullopt)
        .add("posted_date_after", posted_start, "posted_date_start")
        .add("posted_date_before", posted_end, "posted_date_end")
        .add("response_date_after", due_start, "response_date_start")
        .add("response_date_before", due_end, "response_date_end")
        .add("funding_instruments", code_list_arg(args, "funding_instruments"), "funding_instruments")
        .add("funding_categories", code_list_arg(args, "funding_categories"), "funding_categories")
        .add("applicant_types", code_list_arg(args, "applicant_types"), "applicant_types")
        .add("ordering", choice_arg(args, "ordering", kOrdering, true), "ordering");
    Json filters = q.filters();
    if (status) filters["status"] = *status;  // in the argument's words, not Tango's P/F
    q.add("limit", std::optional<int>(limit)).add("page", std::optional<int>(page)).add("shape", std::string(kGrantShape));

    Json body = co_await call.get("/api/grants/", q);
    Page result = read_numbered_page(body, page);
    Json data = Json::array();
    for (const auto& row : result.rows) data.push_back(to_json(parse_grant(row)));
    co_return envelope(std::move(data), result.total, std::move(filters), limit, result.next_cursor, {},
                       call.requests());
}

}  // namespace

providers::ToolDeclaration search_grants_tool(TangoPack& pack) {
    return tango_tool(
        pack, "search_tango_grants", "Search federal grant opportunities",
        "Search federal grant funding opportunities from Grants.gov through the Tango API: programs open for "
        "applications (posted) or announced ahead (forecasted). These are opportunities to apply for, NOT awarded "
        "assistance (Tango has no list of grant awards; for who received money, search contracts or look up a vendor). "
        "Returns grant_id, opportunity number, title, agency, status, posted and response dates, Assistance Listing "
        "(CFDA) numbers, funding instruments and categories, eligible applicant types and funding amounts (ceiling, "
        "floor, total, expected awards). Filters: query, agency, cfda_number, opportunity_number, status, posted and "
        "response date ranges (YYYY-MM-DD), funding_instruments, funding_categories, applicant_types; ordering by "
        "posted_date, deadline_current, rank or last_updated. Up to 100 per call; pass pagination.next_cursor back as "
        "cursor for more.",
        input_schema(), record_schema(), search);
}

}  // namespace toolport::tango
