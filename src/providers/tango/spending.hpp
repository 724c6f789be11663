// Spending totals by agency, vendor, NAICS, PSC or month. Tango has no generic group-by
// endpoint: its metrics endpoints answer the questions they can (one vendor, NAICS or PSC,
// by month or agency, over the last N months; spending_metrics.hpp), and otherwise the
// summary tool pages through the filtered contracts and adds them up here as the pages
// arrive; the result says how many rows it saw against how many matched, so a partial sum
// is never passed off as the total.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "util/json.hpp"

namespace toolport::tango {

class SpendingAggregate {
public:
    enum class GroupBy { agency, vendor, naics, psc, month };
    static std::optional<GroupBy> group_by_named(const std::string& name);

    explicit SpendingAggregate(GroupBy group_by) : group_by_(group_by) {}
    // One contract row as the API returns it (recipient, awarding_office, naics, psc, ...).
    void add(const Json& row);
    // A total Tango computed itself (a metrics row): `count` unknown when the API gave none,
    // and then every group's contract_count is null.
    void add_total(const std::string& key, const std::string& label, double obligated, std::optional<long long> count);
    long long rows() const { return rows_; }
    double total_obligated() const { return total_; }
    // The `top` largest groups by obligated dollars: [{rank, key, label, total_obligated,
    // contract_count, share}]; rows without the grouping field fall in "UNKNOWN".
    Json groups(int top) const;
    std::size_t group_count() const { return groups_.size(); }

private:
    struct Group {
        std::string label;
        double obligated = 0;
        long long count = 0;
    };
    GroupBy group_by_;
    std::map<std::string, Group> groups_;
    long long rows_ = 0;
    double total_ = 0;
    bool counts_known_ = true;
};

}  // namespace toolport::tango
