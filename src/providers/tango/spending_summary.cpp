// get_tango_spending_summary: totals over the contracts that match the filters, grouped,
// from GET /api/contracts/ paged with the cursor up to a configured number of pages.
#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "providers/tango/records.hpp"
#include "providers/tango/spending.hpp"
#include "providers/tango/spending_metrics.hpp"
#include "providers/tango/tango_pack.hpp"
#include "providers/tango/validation.hpp"

namespace toolport::tango {

std::optional<SpendingAggregate::GroupBy> SpendingAggregate::group_by_named(const std::string& name) {
    if (name == "agency") return GroupBy::agency;
    if (name == "vendor") return GroupBy::vendor;
    if (name == "naics") return GroupBy::naics;
    if (name == "psc") return GroupBy::psc;
    if (name == "month") return GroupBy::month;
    return std::nullopt;
}

void SpendingAggregate::add(const Json& row) {
    const Contract c = parse_contract(row);
    std::string key, label;
    switch (group_by_) {
        case GroupBy::agency:
            key = c.awarding_agency.code.value_or("");
            label = c.awarding_agency.name.value_or(key);
            if (c.awarding_agency.name && c.awarding_agency.code)
                label = fmt::format("{} ({})", *c.awarding_agency.name, key);
            break;
        case GroupBy::vendor:
            key = c.vendor.uei.value_or(c.vendor.name.value_or(""));
            label = c.vendor.name
                        ? (c.vendor.uei ? fmt::format("{} ({})", *c.vendor.name, *c.vendor.uei) : *c.vendor.name)
                        : key;
            break;
        case GroupBy::naics:
            key = c.naics.code.value_or("");
            label = c.naics.description ? fmt::format("{} {}", key, *c.naics.description) : key;
            break;
        case GroupBy::psc:
            key = c.psc.code.value_or("");
            label = c.psc.description ? fmt::format("{} {}", key, *c.psc.description) : key;
            break;
        case GroupBy::month:
            key = c.award_date ? c.award_date->substr(0, 7) : "";
            label = key;
            break;
    }
    if (key.empty()) key = label = "UNKNOWN";
    auto& g = groups_[key];
    if (g.label.empty() || g.label == key) g.label = label;
    const double amount = c.obligated.value_or(0);
    g.obligated += amount;
    ++g.count;
    ++rows_;
    total_ += amount;
}

void SpendingAggregate::add_total(const std::string& key, const std::string& label, double obligated,
                                  std::optional<long long> count) {
    auto& g = groups_[key.empty() ? "UNKNOWN" : key];
    if (g.label.empty()) g.label = label.empty() ? (key.empty() ? "UNKNOWN" : key) : label;
    g.obligated += obligated;
    if (count) g.count += *count;
    else counts_known_ = false;
    ++rows_;
    total_ += obligated;
}

Json SpendingAggregate::groups(int top) const {
    std::vector<std::pair<std::string, const Group*>> sorted;
    for (const auto& [key, g] : groups_) sorted.emplace_back(key, &g);
    // Largest first; months in time order instead, the latest `top` of them (a time series
    // cut to its most recent end, which is what "the last N months" means).
    if (group_by_ == GroupBy::month) {
        std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        if (top >= 0 && sorted.size() > static_cast<std::size_t>(top)) sorted.erase(sorted.begin(), sorted.end() - top);
    } else {
        std::stable_sort(sorted.begin(), sorted.end(),
                         [](const auto& a, const auto& b) { return a.second->obligated > b.second->obligated; });
    }
    Json out = Json::array();
    int rank = 0;
    for (const auto& [key, g] : sorted) {
        if (rank == top) break;
        const double share = total_ != 0 ? std::round(g->obligated / total_ * 10000) / 100 : 0;
        out.push_back({{"rank", ++rank},
                       {"key", key},
                       {"label", g->label},
                       {"total_obligated", std::round(g->obligated * 100) / 100},
                       {"contract_count", counts_known_ ? Json(g->count) : Json()},
                       {"share_percent", share}});
    }
    return out;
}

namespace {

const char* const kSummaryShape =
    "key,award_date,obligated,recipient(uei,display_name),"
    "awarding_office(agency_code,agency_name),naics(code,description),psc(code,description)";

Json input_schema() {
    return object_schema({
        {"api_key", api_key_property()},
        {"group_by",
         {{"type", "string"},
          {"enum", {"agency", "vendor", "naics", "psc", "month"}},
          {"default", "agency"},
          {"description", "How to group the dollars: by awarding agency, vendor, NAICS, PSC or award month"}}},
        {"awarding_agency",
         with_example(string_property("Awarding agency by code, name or abbreviation. Example: 'DOD'"), "DOD")},
        {"vendor_uei",
         with_example(string_property("Only this vendor (12-character UEI). Example: 'N553JH75Z8K1'"), "N553JH75Z8K1")},
        {"vendor_name", string_property("Only vendors whose name matches")},
        {"naics_code", with_example(string_property("NAICS code, 2-6 digits. Example: '541512'"), "541512")},
        {"psc_code", with_example(string_property("Product/Service Code, 4 characters. Example: 'D302'"), "D302")},
        {"set_aside_type", string_property("Set-aside code or program name")},
        {"fiscal_year",
         fiscal_year_property(
             "Federal fiscal year (Oct 1 of the year before to Sep 30: FY2025 = 2024-10-01 to 2025-09-30)")},
        {"award_date_start",
         with_example(string_property("Earliest award date, YYYY-MM-DD. Example: '2025-01-01'"), "2025-01-01")},
        {"award_date_end",
         with_example(string_property("Latest award date, YYYY-MM-DD. Example: '2025-06-30'"), "2025-06-30")},
        {"last_months",
         {{"type", "integer"},
          {"minimum", 1},
          {"maximum", 240},
          {"examples", {12}},
          {"description",
           "Look back this many months from today (instead of award dates or a fiscal "
           "year). With group_by month or agency and exactly one of vendor_uei, a 6-digit "
           "naics_code or psc_code (and no other filter), the totals come from Tango's "
           "metrics in one request"}}},
        {"top",
         {{"type", "integer"},
          {"minimum", 1},
          {"maximum", 100},
          {"default", 20},
          {"description",
           "How many groups to return, largest first (1-100, default 20); for month, the "
           "latest months, in time order"}}},
    });
}

// The award dates to ask for. FY N runs from 1 October of N-1 to 30 September of N;
// explicit dates narrow it (YYYY-MM-DD strings compare as dates), and dates wholly outside
// it are refused rather than silently replaced.
std::pair<std::optional<std::string>, std::optional<std::string>> award_window(std::optional<int> fiscal_year,
                                                                               std::optional<std::string> start,
                                                                               std::optional<std::string> end) {
    if (!fiscal_year) return {start, end};
    const std::string fy_start = fmt::format("{}-10-01", *fiscal_year - 1);
    const std::string fy_end = fmt::format("{}-09-30", *fiscal_year);
    std::string from = start ? std::max(*start, fy_start) : fy_start;
    std::string to = end ? std::min(*end, fy_end) : fy_end;
    if (from > to) {
        throw ToolError(ToolErrorCode::invalid_argument,
                        fmt::format("the award dates fall outside fiscal year {} ({} to {})", *fiscal_year, fy_start,
                                    fy_end))
            .parameter(start && *start > fy_end ? "award_date_start" : "award_date_end")
            .suggest("Drop fiscal_year, or give award dates within it.");
    }
    return {from, to};
}

// The date `months` months before today (UTC), YYYY-MM-DD: the start of a last_months
// window when the contracts are added up.
std::string months_ago(int months) {
    using namespace std::chrono;
    const year_month_day today{floor<days>(system_clock::now())};
    year_month_day then = today - std::chrono::months(months);
    if (!then.ok()) then = then.year() / then.month() / last;  // 31 March minus one month
    return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(then.year()), static_cast<unsigned>(then.month()),
                       static_cast<unsigned>(then.day()));
}

// The envelope of a summary: the `top` groups, all of them counted in `total`.
Json summary_envelope(const SpendingAggregate& aggregate, int top, Json filters, int api_calls) {
    return envelope(aggregate.groups(top), static_cast<long long>(aggregate.group_count()), std::move(filters), top,
                    std::nullopt, {}, api_calls);
}

// What the summary says about how its total was made.
Json summary(const std::string& group_by, const char* source, const SpendingAggregate& aggregate,
             std::optional<long long> matching, bool complete, int pages, std::string note) {
    return {{"group_by", group_by},
            {"source", source},
            {"rows_aggregated", aggregate.rows()},
            {"total_matching_contracts", matching ? Json(*matching) : Json()},
            {"complete", complete},
            {"pages_read", pages},
            {"total_obligated_aggregated", std::round(aggregate.total_obligated() * 100) / 100},
            {"note", std::move(note)}};
}

Json record_schema() {
    return object_schema({{"rank", {{"type", "integer"}}},
                          {"key", {{"type", "string"}}},
                          {"label", {{"type", "string"}}},
                          {"total_obligated", {{"type", "number"}}},
                          {"contract_count", nullable("integer")},
                          {"share_percent", {{"type", "number"}}}});
}

}  // namespace

providers::ToolDeclaration spending_summary_tool(TangoPack& pack) {
    auto body = [&pack](TangoCall& call, const Json& args) -> Task<Json> {
        const auto group_name =
            choice_arg(args, "group_by", {"agency", "vendor", "naics", "psc", "month"}).value_or("agency");
        const int top = int_arg(args, "top", 20, 1, 100);
        const auto [start, end] = date_range_arg(args, "award_date_start", "award_date_end");
        const auto fiscal_year = fiscal_year_arg(args);
        SummaryFilters f;
        f.group_by = *SpendingAggregate::group_by_named(group_name);
        f.awarding_agency = text_arg(args, "awarding_agency", 120);
        f.vendor_uei = uei_arg(args, "vendor_uei");
        f.vendor_name = text_arg(args, "vendor_name");
        f.naics = naics_arg(args, "naics_code");
        f.psc = psc_arg(args, "psc_code");
        f.set_aside = set_aside_arg(args, "set_aside_type");
        f.last_months = optional_int_arg(args, "last_months", 1, 240);
        if (f.last_months && (start || end || fiscal_year)) {
            throw ToolError(ToolErrorCode::invalid_argument,
                            "last_months and award dates or a fiscal_year were both given")
                .parameter("last_months")
                .suggest("Give one window: last_months, or award_date_start/award_date_end, or fiscal_year.");
        }
        Query q;
        q.add("awarding_agency", f.awarding_agency, "awarding_agency")
            .add("uei", f.vendor_uei, "vendor_uei")
            .add("recipient", f.vendor_name, "vendor_name")
            .add("naics", f.naics, "naics_code")
            .add("psc", f.psc, "psc_code")
            .add("set_aside", f.set_aside, "set_aside_type");
        const auto [from, to] = f.last_months ? std::make_pair(std::optional<std::string>(months_ago(*f.last_months)),
                                                               std::optional<std::string>())
                                              : award_window(fiscal_year, start, end);
        // The award window as applied: the fiscal year's or last_months' dates too.
        q.add("award_date_gte", from, "award_date_start").add("award_date_lte", to, "award_date_end");
        Json filters = q.filters();
        filters["group_by"] = group_name;
        if (fiscal_year) filters["fiscal_year"] = *fiscal_year;
        if (f.last_months) filters["last_months"] = *f.last_months;

        SpendingAggregate aggregate(f.group_by);
        std::string fallback_note;
        Json metrics_error;
        if (auto question = metrics_question(f)) {
            Query metrics_query;
            if (question->by_agency()) metrics_query.add("group_by", std::string("agency"));
            // The metrics are a shortcut: when Tango refuses them (a plan limit, a 404, its
            // own trouble) the contracts are added up instead, and the summary says why.
            // Being rate limited is not a reason to send more requests.
            Json answer;
            std::optional<ToolError> refused;
            try {
                answer = co_await call.get(question->path(), metrics_query);
            } catch (const ToolError& e) {
                if (e.code() == ToolErrorCode::rate_limited || e.code() == ToolErrorCode::budget_exceeded) throw;
                refused = e;
            }
            if (refused) metrics_error = part_error(*refused);
            if (!refused && read_metrics(answer, *question, aggregate)) {
                const char* subject = question->resource == "entities" ? "vendor"
                                      : question->resource == "naics"  ? "NAICS code"
                                                                       : "PSC";
                Json env = summary_envelope(aggregate, top, std::move(filters), call.requests());
                env["summary"] =
                    summary(group_name, "metrics", aggregate, std::nullopt, true, 1,
                            fmt::format("Tango's own totals (its metrics for this {} over the last {} months), "
                                        "not a sum of sampled rows.",
                                        subject, question->months));
                co_return env;
            }
            fallback_note = refused ? fmt::format(
                                          " (Tango refused its metrics for this question ({}), so the contracts "
                                          "were added up instead.)",
                                          metrics_error["error_code"].get<std::string>())
                                    : std::string(
                                          " (Tango's metrics answer was not in a form this version reads, so the "
                                          "contracts were added up instead.)");
            aggregate = SpendingAggregate(f.group_by);
        }

        long long matching = 0;
        int pages = 0;
        std::optional<std::string> cursor;
        const int max_pages = pack.settings.spending_summary_max_pages;
        // The first page is the answer; a later one Tango refuses ends the sum there, which
        // the summary then says (complete false, pages_error) instead of failing the call.
        Json pages_error;
        do {
            Query page_query = q;
            page_query.add("limit", std::optional<int>(100)).add("cursor", cursor).add("shape", std::string(kSummaryShape));
            std::optional<ToolError> refused;
            Json body;
            try {
                body = co_await call.get("/api/contracts/", page_query);
            } catch (const ToolError& e) {
                if (pages == 0) throw;
                refused = e;
            }
            if (refused) {
                pages_error = part_error(*refused);
                break;
            }
            Page page = read_cursor_page(body);
            ++pages;
            matching = page.total;
            for (const auto& row : page.rows) aggregate.add(row);
            cursor = page.next_cursor;
        } while (cursor && pages < max_pages);

        const bool complete = !cursor;
        std::string note;
        if (complete) {
            note = "Every matching contract was added up.";
        } else if (!pages_error.is_null()) {
            note = fmt::format(
                "Partial: {} of {} matching contracts were added up; Tango refused page {} ({}: see "
                "pages_error). Retry later for a complete total, or narrow the filters.",
                aggregate.rows(), matching, pages + 1, pages_error["error_code"].get<std::string>());
        } else {
            note = fmt::format(
                "Partial: {} of {} matching contracts were added up (the page cap is {} pages of 100). "
                "Narrow the filters (a fiscal_year, an agency, a NAICS code) for a complete total.",
                aggregate.rows(), matching, max_pages);
        }
        Json env = summary_envelope(aggregate, top, std::move(filters), call.requests());
        env["summary"] = summary(group_name, "contracts", aggregate, matching, complete, pages, note + fallback_note);
        if (!metrics_error.is_null()) env["summary"]["metrics_error"] = std::move(metrics_error);
        if (!pages_error.is_null()) env["summary"]["pages_error"] = std::move(pages_error);
        co_return env;
    };
    auto declaration = tango_tool(
        pack, "get_tango_spending_summary", "Summarize federal contract spending",
        "Summarize federal contract spending through the Tango API: dollars obligated and number of contracts, grouped "
        "by awarding agency, vendor, NAICS, PSC or award month, largest first, over the contract awards that match the "
        "filters (awarding_agency, vendor_uei or vendor_name, naics_code, psc_code, set_aside_type, fiscal_year, award "
        "date range, or last_months). One vendor, NAICS code or PSC by month or agency over last_months is answered "
        "from Tango's own metrics (summary.source metrics, complete). Otherwise, as Tango has no group-by endpoint, "
        "the "
        "tool reads the matching contracts page by page (100 per page, up to a configured number of pages) and says in "
        "summary how complete the sum is: rows_aggregated against total_matching_contracts, and complete true or "
        "false (with pages_error when Tango refused a later page). Narrow filters give complete totals. Related: "
        "search_tango_contracts for the contracts themselves, get_tango_vendor_profile for a vendor's lifetime totals.",
        input_schema(), record_schema(), body);
    declaration.output_schema["properties"]["summary"] = required_object(
        {{"group_by", {{"type", "string"}}},
         {"rows_aggregated", {{"type", "integer"}}},
         {"source", {{"type", "string"}, {"enum", {"contracts", "metrics"}}}},
         {"total_matching_contracts", nullable("integer")},
         {"complete", {{"type", "boolean"}}},
         {"pages_read", {{"type", "integer"}}},
         {"total_obligated_aggregated", {{"type", "number"}}},
         {"note", {{"type", "string"}}}});
    // Only when Tango refused the metrics this summary would have come from.
    declaration.output_schema["properties"]["summary"]["properties"]["metrics_error"] = part_error_schema(
        "Why Tango's own metrics were not used: it refused that request (e.g. 403 for the plan, 5xx); the contracts "
        "were added up instead");
    declaration.output_schema["properties"]["summary"]["properties"]["pages_error"] = part_error_schema(
        "Why the sum stopped before the last page: Tango refused a later page (e.g. 429, 5xx); complete is false");
    declaration.output_schema["required"].push_back("summary");
    declaration.output_schema = portable_schema(std::move(declaration.output_schema));
    // Adding up contracts reads up to spending_summary_max_pages pages one after another: a
    // client that declared the tasks extension may run it as a task and poll for the result.
    declaration.execution = {{"taskSupport", "optional"}};
    return declaration;
}

}  // namespace toolport::tango
