// The checks that tell a real card number, SSN, IBAN or random token from a look-alike:
// a Luhn digit, the SSA's never-issued ranges, ISO 13616's mod-97, Shannon entropy.
#pragma once

#include <string_view>

namespace toolport::util::redaction {

// `digits` (only '0'-'9') passes the Luhn check.
bool luhn_valid(std::string_view digits);
// A payment card number by its issuer prefix and length (Visa, Mastercard, Amex, Discover,
// Diners, JCB, UnionPay, Maestro) and Luhn digit: a 13-digit millisecond timestamp or an
// order id that happens to pass Luhn is not taken for one.
bool card_number_valid(std::string_view digits);
// Area, group and serial (3, 2 and 4 digits) of an SSN that can have been issued: area
// not 000, 666 or 900-999, group not 00, serial not 0000.
bool ssn_valid(std::string_view area, std::string_view group, std::string_view serial);
// `iban` (letters and digits only, no spaces): country code, check digits, 15-34
// characters, and the mod-97 remainder 1.
bool iban_valid(std::string_view iban);
// Shannon entropy of the bytes of `text`, in bits per byte.
double shannon_entropy(std::string_view text);

}  // namespace toolport::util::redaction
