/* fuzz_samples: libFuzzer harness for the sample file reader (format/samples.c): open, stream
 * every record, the note; and the sample file name parser on the input as a name. */
#include "fuzz_input.h"
#include "samples.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512], note[512];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    struct samples_file sf;
    if (samples_open(&sf, path, err, sizeof err) == 0) {
        struct sample s;
        uint64_t sum = 0;
        while (samples_next(&sf, &s, err, sizeof err) == 1)
            for (uint32_t i = 0; i < s.nframes; i++)
                sum += s.frames[i] + (unsigned char)s.comm[i % 16];
        samples_note(&sf, note, sizeof note);
        samples_close(&sf);
        if (sum == 42)
            note[0] = 0;
    }
    close(fd);
    char name[256];
    size_t n = size < sizeof name - 1 ? size : sizeof name - 1;
    memcpy(name, data, n);
    name[n] = '\0';
    long pid;
    unsigned gen;
    samples_parse_name(name, &pid, &gen);
    return 0;
}
