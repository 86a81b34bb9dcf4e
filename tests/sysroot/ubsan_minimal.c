// flags: -fsanitize=signed-integer-overflow,alignment -fsanitize-minimal-runtime -fsanitize-recover=all
// requires: clang_rt.ubsan_minimal
/* ubsan_minimal: -fsanitize=undefined's minimal runtime with no other flag */
#define OVERFLOW_MESSAGE "ubsan: add-overflow"
#define MISALIGNED_MESSAGE "ubsan: type-mismatch"
#include "ubsan_report.h"
