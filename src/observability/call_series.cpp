#include "observability/call_series.hpp"

#include <algorithm>

#include <bit>
#include <cmath>

namespace toolport::observability {

namespace {
constexpr auto kRelaxed = std::memory_order_relaxed;
}

// Bin 2k covers [16·2^k, 16·2^k·√2) µs and bin 2k+1 the rest up to 16·2^(k+1) µs: the
// power of two from the bit width, the half from the bit below the leading one (√2 ≈ 1.5
// is close enough for a chart).
int LatencyBins::bin_of(double ms) {
    if (!(ms > 0.016)) return 0;
    const double sixteenths = ms * 62.5;  // of 16 µs: >= 1
    if (sixteenths >= 1.0e15) return kBins - 1;
    const auto units = static_cast<std::uint64_t>(sixteenths);
    const int octave = static_cast<int>(std::bit_width(units)) - 1;
    const bool upper_half = octave > 0 ? ((units >> (octave - 1)) & 1u) != 0 : sixteenths >= 1.5;
    const int bin = 2 * octave + (upper_half ? 1 : 0) + 1;
    return bin < kBins ? bin : kBins - 1;
}

double LatencyBins::value_ms(int bin) {
    if (bin <= 0) return 0.008;
    // Bin b >= 1 covers [16·2^((b-1)/2), 16·2^(b/2)) µs, about; its geometric middle.
    return 0.016 * std::pow(2.0, (static_cast<double>(bin) - 0.5) / 2.0);
}

std::optional<double> LatencyBins::quantile(const std::array<std::uint64_t, kBins>& counts, double q) {
    std::uint64_t total = 0;
    for (auto c : counts) total += c;
    if (total == 0) return std::nullopt;
    // The smallest bin by which at least q of the calls are counted.
    const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total)));
    std::uint64_t seen = 0;
    for (int b = 0; b < kBins; ++b) {
        seen += counts[b];
        if (seen >= rank && seen > 0) return value_ms(b);
    }
    return value_ms(kBins - 1);
}

StepCounts& StepCounts::operator+=(const StepCounts& other) {
    calls += other.calls;
    errors += other.errors;
    for (int b = 0; b < LatencyBins::kBins; ++b) latency[b] += other.latency[b];
    return *this;
}

CallSeries::CallSeries() : cells_(new Cell[kSteps]) {}

void CallSeries::record(std::int64_t step, int bin, bool error) {
    Cell& cell = cells_[static_cast<std::size_t>(step % kSteps)];
    const std::int64_t seen = cell.step.load(kRelaxed);
    if (seen > step) return;  // a step over an hour old: nothing shows it any more
    if (seen != step) {
        // The step an hour ago had this cell: forget it. Two writers meeting here may lose
        // a call of the new step, never mix two steps for long.
        cell.calls.store(0, kRelaxed);
        cell.errors.store(0, kRelaxed);
        for (auto& bin : cell.latency) bin.store(0, kRelaxed);
        cell.step.store(step, kRelaxed);
    }
    cell.calls.fetch_add(1, kRelaxed);
    if (error) cell.errors.fetch_add(1, kRelaxed);
    cell.latency[static_cast<std::size_t>(bin)].fetch_add(1, kRelaxed);
}

std::vector<StepCounts> CallSeries::read(std::int64_t step) const {
    std::vector<StepCounts> steps(kSteps);
    for (int i = 0; i < kSteps; ++i) {
        const std::int64_t s = step - (kSteps - 1) + i;
        if (s < 0) continue;
        const Cell& cell = cells_[static_cast<std::size_t>(s % kSteps)];
        if (cell.step.load(kRelaxed) != s) continue;
        auto& out = steps[static_cast<std::size_t>(i)];
        out.calls = cell.calls.load(kRelaxed);
        out.errors = cell.errors.load(kRelaxed);
        for (int b = 0; b < LatencyBins::kBins; ++b) out.latency[b] = cell.latency[b].load(kRelaxed);
    }
    return steps;
}

void CallTotals::record(int bin, bool error) {
    calls_.fetch_add(1, kRelaxed);
    if (error) errors_.fetch_add(1, kRelaxed);
    latency_[static_cast<std::size_t>(bin)].fetch_add(1, kRelaxed);
}

StepCounts CallTotals::read() const {
    StepCounts out;
    out.calls = calls_.load(kRelaxed);
    out.errors = errors_.load(kRelaxed);
    for (int b = 0; b < LatencyBins::kBins; ++b) out.latency[b] = latency_[b].load(kRelaxed);
    return out;
}

namespace {
template <class T, class Map>
T& find_or_make(std::mutex& mutex, Map& map, const std::string& name) {
    std::lock_guard lock(mutex);
    auto it = map.find(name);
    if (it == map.end()) it = map.emplace(name, std::make_unique<T>()).first;
    return *it->second;
}
template <class T, class Map>
const T* find_in(std::mutex& mutex, const Map& map, const std::string& name) {
    std::lock_guard lock(mutex);
    auto it = map.find(name);
    return it == map.end() ? nullptr : it->second.get();
}
}  // namespace

CallSeries& CallStats::source(const std::string& name) { return find_or_make<CallSeries>(mutex_, sources_, name); }
CallSeries& CallStats::service(const std::string& name) { return find_or_make<CallSeries>(mutex_, services_, name); }
CallTotals& CallStats::tool(const std::string& name) { return find_or_make<CallTotals>(mutex_, tools_, name); }

void CallStats::set_last_error(const std::string& source, std::string message, std::chrono::system_clock::time_point at) {
    std::lock_guard lock(mutex_);
    last_errors_[source] = LastError{std::move(message), at};
}

std::vector<std::string> CallStats::sources() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> names;
    for (const auto& [name, series] : sources_) names.push_back(name);
    return names;
}

const CallSeries* CallStats::find_source(const std::string& name) const {
    return find_in<CallSeries>(mutex_, sources_, name);
}
const CallSeries* CallStats::find_service(const std::string& name) const {
    return find_in<CallSeries>(mutex_, services_, name);
}
const CallTotals* CallStats::find_tool(const std::string& name) const {
    return find_in<CallTotals>(mutex_, tools_, name);
}

std::optional<LastError> CallStats::last_error(const std::string& source) const {
    std::lock_guard lock(mutex_);
    auto it = last_errors_.find(source);
    if (it == last_errors_.end()) return std::nullopt;
    return it->second;
}

BudgetPressure::BudgetPressure() : cells_(std::make_unique<Cell[]>(CallSeries::kSteps)) {}

BudgetPressure::Cell& BudgetPressure::cell_for(std::int64_t step) {
    Cell& cell = cells_[static_cast<std::size_t>(step % CallSeries::kSteps)];
    if (cell.step.load(kRelaxed) != step) {
        // As CallSeries::record: the cell held the step an hour ago.
        cell.peak_permille.store(0, kRelaxed);
        cell.refused.store(0, kRelaxed);
        cell.step.store(step, kRelaxed);
    }
    return cell;
}

void BudgetPressure::note(std::int64_t step, std::int64_t used, std::int64_t limit) {
    if (limit <= 0 || step < 0) return;
    const auto share = static_cast<std::uint32_t>(std::clamp<std::int64_t>(used * 1000 / limit, 0, 1000));
    auto& peak = cell_for(step).peak_permille;
    auto seen = peak.load(kRelaxed);
    while (seen < share && !peak.compare_exchange_weak(seen, share, kRelaxed)) {}
}

void BudgetPressure::refused(std::int64_t step) {
    if (step < 0) return;
    cell_for(step).refused.fetch_add(1, kRelaxed);
}

BudgetPressure::Reading BudgetPressure::read(std::int64_t step) const {
    Reading r;
    constexpr int kMinute = 60 / CallSeries::kStepSeconds;
    std::uint32_t peak = 0;
    for (int i = 0; i < CallSeries::kSteps; ++i) {
        const std::int64_t s = step - i;
        if (s < 0) break;
        const Cell& cell = cells_[static_cast<std::size_t>(s % CallSeries::kSteps)];
        if (cell.step.load(kRelaxed) != s) continue;
        r.any = true;
        r.refused += cell.refused.load(kRelaxed);
        if (i < kMinute) peak = std::max(peak, cell.peak_permille.load(kRelaxed));
    }
    r.peak = peak / 1000.0;
    return r;
}

CallStats& call_stats() {
    static CallStats stats;
    return stats;
}

}  // namespace toolport::observability
