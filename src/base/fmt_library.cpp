// fmt's compiled part, built once into the shipped binary.
//
// Debian ships fmt as a shared library and headers. The shipped build links its C++ runtime
// statically (a one-item command must not pay the dynamic loader for libfmt), and used fmt's
// header-only mode for that, which compiles fmt's whole implementation (format-inl.h) in every
// translation unit: about 4.7 s of g++ and 11 s of clang-tidy per file, most of CI's release
// build. Instead the implementation is compiled here, once, and every other file includes fmt's
// headers as with the shared library. The templates those headers declare `extern` are
// instantiated below, for the character type stockctl formats (char).
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view,
                                 basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);

}  // namespace detail
FMT_END_NAMESPACE
