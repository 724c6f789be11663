// Tango's metrics endpoints, for the spending summary questions they answer:
//   GET /api/{entities|naics|psc}/{id}/metrics/{months}/{year|quarter|month}/[?group_by=agency]
// give Tango's own obligation totals for one vendor, NAICS code or PSC over the last N
// months, by period and optionally by agency. A summary by month or by agency of one of
// those, over the last N months and with no other filter, is asked there (one request,
// Tango's totals, complete); any other question pages through the contracts instead.
#pragma once

#include <optional>
#include <string>

#include "providers/tango/spending.hpp"
#include "util/json.hpp"

namespace toolport::tango {

struct MetricsQuestion {
    std::string resource;  // "entities", "naics" or "psc"
    std::string id;        // the UEI or the code
    int months = 12;
    SpendingAggregate::GroupBy group_by = SpendingAggregate::GroupBy::month;

    // "/api/entities/N553JH75Z8K1/metrics/24/month/"; by agency: yearly periods, added up.
    std::string path() const;
    bool by_agency() const { return group_by == SpendingAggregate::GroupBy::agency; }
};

// The filters a spending summary was given, as validated.
struct SummaryFilters {
    SpendingAggregate::GroupBy group_by = SpendingAggregate::GroupBy::agency;
    std::optional<std::string> vendor_uei, vendor_name, awarding_agency, naics, psc, set_aside;
    std::optional<int> last_months;
};

// The metrics question that is the summary's question, or nullopt when the metrics cannot
// answer it exactly (another grouping, several or other filters, no look-back in months).
std::optional<MetricsQuestion> metrics_question(const SummaryFilters& filters);

// Adds a metrics answer's rows to `aggregate`. Returns false, adding nothing, when a row
// holds no obligation figure this code can read (the caller then adds up contracts
// instead of reporting zeros): the documentation describes `awards` as "obligation/count
// values" without a sample, so a plain number (dollars) and an object with an obligation
// and a count field are both read.
bool read_metrics(const Json& body, const MetricsQuestion& question, SpendingAggregate& aggregate);

}  // namespace toolport::tango
