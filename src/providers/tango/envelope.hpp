// The answer every tango tool gives (seed 000, "Response Formatting"): the records, how
// many matched in all, what was applied, how to get more, and what the call cost.
//
//   {data, total, returned, filters, pagination {limit, has_more, next_cursor?},
//    execution {duration_ms, cached, api_calls}}
//
// (null members are dropped before the envelope leaves the pack: drop_nulls.)
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "util/json.hpp"

namespace toolport::tango {

// One page of a list endpoint, in either of the API's pagination styles.
struct Page {
    long long total = 0;  // the API's count of every match
    Json rows = Json::array();
    std::optional<std::string> next_cursor;  // pass back as `cursor` for the next page
};

// Keyset pagination (contracts, IDVs): `cursor` (or the cursor in `next`).
Page read_cursor_page(const Json& body);
// Page-number pagination (grants, opportunities, forecasts, entities): the next page is
// offered as the cursor "page:<n>".
Page read_numbered_page(const Json& body, int page);

Json envelope(Json data, long long total, Json filters, int limit, const std::optional<std::string>& next_cursor,
              std::chrono::milliseconds duration, int api_calls);

// `value` without the object members that are null, at every depth: a field Tango had no
// value for is left out, not sent as null. The output schemas then declare each field with
// one type and leave it out of `required` (a [type, "null"] union is what several
// validators, SDKs and model providers handle worst).
void drop_nulls(Json& value);

// What a cached copy of an envelope says about itself: cached, no API calls, this call's
// duration; the text block follows (for the pipeline's on_cache_hit).
void mark_cached(Json& envelope, std::chrono::milliseconds duration);

}  // namespace toolport::tango
