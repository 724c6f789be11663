// Checks of the tango tools' arguments, before anything reaches the API: a value refused
// here never costs a request. Each failure is a ToolError in the seed's shape (code,
// parameter, what was provided, the expected format, an example).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/json.hpp"

namespace toolport::tango {

// Cuts `text` to at most `max_chars` characters, never inside a UTF-8 sequence.
void truncate_utf8(std::string& text, std::size_t max_chars);

// Control characters stripped (C0 and C1; tabs and line breaks, U+2028 and U+2029 become
// spaces), zero-width characters, bidirectional overrides and byte-order marks dropped,
// whitespace trimmed, at most `max_length` characters (UTF-8 aware). nullopt when absent, null or empty after cleaning. Throws INVALID_ARGUMENT for
// a value that is not a string (numbers are accepted and turned into text).
std::optional<std::string> text_arg(const Json& args, const std::string& name, std::size_t max_length = 200);

// YYYY-MM-DD and a real calendar date (2024-02-29 yes, 2023-02-29 no).
std::optional<std::string> date_arg(const Json& args, const std::string& name);
// Both ends checked, and start <= end.
void check_date_range(const std::optional<std::string>& start, const std::string& start_name,
                      const std::optional<std::string>& end, const std::string& end_name);
bool is_calendar_date(std::string_view text);
// `start_name` and `end_name` read as dates and checked as a range.
std::pair<std::optional<std::string>, std::optional<std::string>> date_range_arg(const Json& args,
                                                                                 const std::string& start_name,
                                                                                 const std::string& end_name);
// A keyset cursor (contracts): base64 of the JSON keyset Tango hands out (e.g. of
// ["2025-08-13", "<uuid>"]), as pagination.next_cursor gives it; nullopt without one.
// INVALID_FORMAT for anything else (a page cursor, a cut or made-up string), before it
// costs a request.
std::optional<std::string> keyset_cursor_arg(const Json& args);
// The page a "page:<n>" cursor names (1 without one); INVALID_FORMAT for another cursor.
int page_cursor_arg(const Json& args);

// A SAM.gov Unique Entity ID: 12 characters, letters and digits, no O or I, not starting
// with 0 (GSA's rules). Upper-cased.
std::optional<std::string> uei_arg(const Json& args, const std::string& name);
bool is_uei(std::string_view text);
// A CAGE code: 5 letters or digits.
bool is_cage(std::string_view text);

// NAICS: 2 to 6 digits. PSC: 4 characters, letters and digits.
std::optional<std::string> naics_arg(const Json& args, const std::string& name);
std::optional<std::string> psc_arg(const Json& args, const std::string& name);

// Set-aside names and FPDS codes ("SBA", "8(a)", "SDVOSB", "HUBZone", "women-owned", ...)
// as the FPDS codes the API filters on, joined with '|' (the API's OR).
std::optional<std::string> set_aside_arg(const Json& args, const std::string& name);
// The FPDS codes one name stands for (empty when unknown).
std::vector<std::string> set_aside_codes(std::string_view name);
// "Small Business Set Aside - Total" for "SBA"; "" when unknown.
std::string set_aside_description(std::string_view code);

// An integer in [min, max]; `fallback` when absent.
int int_arg(const Json& args, const std::string& name, int fallback, int min, int max);
// `example` is the value a refusal offers (default: 10, kept within the range).
std::optional<int> optional_int_arg(const Json& args, const std::string& name, int min, int max,
                                    std::optional<int> example = std::nullopt);
// A federal fiscal year, 1990 to 2100; a refusal offers a recent year as its example.
std::optional<int> fiscal_year_arg(const Json& args, const std::string& name = "fiscal_year");
inline constexpr int kExampleFiscalYear = 2025;
std::optional<bool> bool_arg(const Json& args, const std::string& name);
std::optional<double> number_arg(const Json& args, const std::string& name, double min);

// One of `allowed` (each may be prefixed with '-' for descending when `signed_order`).
std::optional<std::string> choice_arg(const Json& args, const std::string& name,
                                      const std::vector<std::string>& allowed, bool signed_order = false);

}  // namespace toolport::tango
