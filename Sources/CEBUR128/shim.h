// Debian's libebur128-dev (EBU R128 loudness: integrated, true peak) for Sources/Shelf/Loudness.
#include <ebur128.h>
