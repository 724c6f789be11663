// response_time_ms: how long the call took, from request to response.
#include <fmt/format.h>

#include "spec/assertions/assertion_type.hpp"

namespace toolport::spec::detail {

namespace {

Verdict check_response_time(const Json& params, const CheckContext& context) {
    double max = params["max"].get<double>();
    auto took = context.elapsed.count();
    if (static_cast<double>(took) <= max) return Verdict::pass(fmt::format("took {} ms (at most {} ms)", took, max));
    return Verdict::fail(fmt::format("the response took {} ms, more than the maximum of {} ms", took, max));
}

}  // namespace

const AssertionType kResponseTimeAssertion{"response_time_ms",
                                           {{"max", FieldKind::positive_number, true}},
                                           nullptr,
                                           check_response_time};

}  // namespace toolport::spec::detail
