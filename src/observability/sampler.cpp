#include "observability/sampler.hpp"

#include <cmath>

namespace toolport::observability {

Sampler::Sampler(Root root, double ratio, bool parent_based)
    : root_(root), ratio_(ratio), parent_based_(parent_based) {}

std::optional<Sampler> Sampler::named(std::string_view name, double ratio) {
    if (!(ratio >= 0.0 && ratio <= 1.0)) return std::nullopt;  // also refuses NaN
    if (name == "always_on") return Sampler(Root::always_on, 1.0, false);
    if (name == "always_off") return Sampler(Root::always_off, 0.0, false);
    if (name == "traceidratio") return Sampler(Root::ratio, ratio, false);
    if (name == "parentbased_always_on") return Sampler(Root::always_on, 1.0, true);
    if (name == "parentbased_always_off") return Sampler(Root::always_off, 0.0, true);
    if (name == "parentbased_traceidratio") return Sampler(Root::ratio, ratio, true);
    return std::nullopt;
}

bool Sampler::sample(const TraceContext* parent, const TraceId& trace_id) const {
    if (parent_based_ && parent && parent->valid()) return parent->sampled();
    switch (root_) {
        case Root::always_on: return true;
        case Root::always_off: return false;
        case Root::ratio: {
            // The trace id's last 8 bytes as a number below 2^63, compared with ratio * 2^63:
            // the same decision in every process that sees the trace (W3C trace ids are
            // random in their right-most bytes).
            std::uint64_t value = 0;
            for (std::size_t i = 8; i < 16; ++i) value = (value << 8) | trace_id[i];
            value >>= 1;
            return static_cast<double>(value) < ratio_ * 9223372036854775808.0;
        }
    }
    return false;
}

}  // namespace toolport::observability
