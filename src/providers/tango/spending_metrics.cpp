#include "providers/tango/spending_metrics.hpp"

#include <fmt/format.h>

#include "util/percent.hpp"

namespace toolport::tango {

namespace {

using GroupBy = SpendingAggregate::GroupBy;

std::optional<double> number_in(const Json& value, std::initializer_list<const char*> keys) {
    if (value.is_number()) return value.get<double>();
    if (!value.is_object()) return std::nullopt;
    for (const char* key : keys) {
        auto it = value.find(key);
        if (it != value.end() && it->is_number()) return it->get<double>();
    }
    return std::nullopt;
}

// The obligated dollars and the award count of a row's `awards`.
std::optional<std::pair<double, std::optional<long long>>> awards_of(const Json& row) {
    auto it = row.find("awards");
    if (it == row.end()) return std::nullopt;
    auto dollars = number_in(*it, {"obligations", "obligated", "total_obligated", "awards_obligated", "amount"});
    if (!dollars) return std::nullopt;
    std::optional<long long> count;
    if (it->is_object()) {
        if (auto n = number_in(*it, {"count", "awards_count", "award_count"})) count = static_cast<long long>(*n);
    }
    if (!count) {
        if (auto n = number_in(row, {"awards_count", "award_count"})) count = static_cast<long long>(*n);
    }
    return std::make_pair(*dollars, count);
}

// An agency as a metrics row names it: a name, a code, or an object with either.
std::pair<std::string, std::string> agency_of(const Json& row) {
    auto it = row.find("agency");
    if (it == row.end() || it->is_null()) return {"", ""};
    if (it->is_string()) return {it->get<std::string>(), it->get<std::string>()};
    if (it->is_number()) return {it->dump(), it->dump()};
    if (!it->is_object()) return {"", ""};
    auto text = [&](const char* key) -> std::string {
        auto f = it->find(key);
        if (f == it->end() || f->is_null()) return "";
        return f->is_string() ? f->get<std::string>() : f->dump();
    };
    const std::string code = text("code");
    const std::string name = text("name");
    const std::string key = code.empty() ? name : code;
    const std::string label = !name.empty() && !code.empty() ? fmt::format("{} ({})", name, code) : key;
    return {key, label};
}

}  // namespace

std::string MetricsQuestion::path() const {
    return fmt::format("/api/{}/{}/metrics/{}/{}/", resource, util::percent_encode(id), months,
                       by_agency() ? "year" : "month");
}

std::optional<MetricsQuestion> metrics_question(const SummaryFilters& f) {
    if (!f.last_months) return std::nullopt;
    if (f.group_by != GroupBy::month && f.group_by != GroupBy::agency) return std::nullopt;
    if (f.vendor_name || f.awarding_agency || f.set_aside) return std::nullopt;
    const int named = f.vendor_uei.has_value() + f.naics.has_value() + f.psc.has_value();
    if (named != 1) return std::nullopt;
    MetricsQuestion q;
    q.months = *f.last_months;
    q.group_by = f.group_by;
    if (f.vendor_uei) {
        q.resource = "entities";
        q.id = *f.vendor_uei;
    } else if (f.naics) {
        // Metrics are kept per NAICS code (six digits); a prefix is a question for contracts.
        if (f.naics->size() != 6) return std::nullopt;
        q.resource = "naics";
        q.id = *f.naics;
    } else {
        q.resource = "psc";
        q.id = *f.psc;
    }
    return q;
}

bool read_metrics(const Json& body, const MetricsQuestion& question, SpendingAggregate& aggregate) {
    if (!body.is_object()) return false;
    auto results = body.find("results");
    if (results == body.end() || !results->is_array()) return false;
    struct Row {
        std::string key, label;
        double dollars;
        std::optional<long long> count;
    };
    std::vector<Row> rows;
    for (const auto& row : *results) {
        if (!row.is_object()) return false;
        auto awards = awards_of(row);
        if (!awards) return false;
        Row r{.dollars = awards->first, .count = awards->second};
        if (question.by_agency()) {
            std::tie(r.key, r.label) = agency_of(row);
        } else {
            const auto year = number_in(row, {"year"});
            const auto month = number_in(row, {"month"});
            if (!year || !month || *month < 1 || *month > 12) return false;
            r.key = r.label = fmt::format("{:04}-{:02}", static_cast<int>(*year), static_cast<int>(*month));
        }
        rows.push_back(std::move(r));
    }
    for (const auto& r : rows) aggregate.add_total(r.key, r.label, r.dollars, r.count);
    return true;
}

}  // namespace toolport::tango
