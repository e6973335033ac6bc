// Decoding (FFmpeg's libraries) and the descriptors (FFTW3) of one track.
// The definitions follow librosa's where it has one, so that librosa can grade them on the same
// samples: see docs/sonic.md for each descriptor's window, bands and unit.
#include "shelf_sonic.h"

#include <fftw3.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/opt.h>
#include <libswresample/swresample.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_FFT SHELF_SONIC_FFT
#define HOP SHELF_SONIC_HOP
#define SR SHELF_SONIC_RATE
#define BINS (N_FFT / 2 + 1)
#define N_MELS 128
#define N_MFCC 13
#define TEMPO_WINDOW 344 // 8 s of onset envelope, as librosa's tempo
#define TEMPO_STEP 8

// FFTW's planner is not thread-safe; plans are made once and then only executed.
static pthread_mutex_t plan_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
    float window[N_FFT];
    float freqs[BINS];
    int mel_lo[N_MELS], mel_hi[N_MELS];
    float *mel_w; // N_MELS x BINS, zero outside [lo, hi)
    float chroma_w[12][BINS];
    float dct[N_MFCC][N_MELS];
} tables;

static tables *shared_tables = NULL;

static double slaney_mel(double f) {
    const double f_sp = 200.0 / 3, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp, logstep = log(6.4) / 27.0;
    return f >= min_log_hz ? min_log_mel + log(f / min_log_hz) / logstep : f / f_sp;
}

static double slaney_hz(double m) {
    const double f_sp = 200.0 / 3, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp, logstep = log(6.4) / 27.0;
    return m >= min_log_mel ? min_log_hz * exp(logstep * (m - min_log_mel)) : f_sp * m;
}

static tables *make_tables(void) {
    tables *t = calloc(1, sizeof(tables));
    if (!t) return NULL;
    t->mel_w = calloc((size_t)N_MELS * BINS, sizeof(float));
    if (!t->mel_w) { free(t); return NULL; }
    for (int i = 0; i < N_FFT; i++) t->window[i] = (float)(0.5 - 0.5 * cos(2 * M_PI * i / N_FFT));
    for (int k = 0; k < BINS; k++) t->freqs[k] = (float)((double)k * SR / N_FFT);
    // Slaney-style mel filters, area-normalised (librosa's default).
    double mel_f[N_MELS + 2];
    double lo = slaney_mel(0), hi = slaney_mel(SR / 2.0);
    for (int i = 0; i < N_MELS + 2; i++) mel_f[i] = slaney_hz(lo + (hi - lo) * i / (N_MELS + 1));
    for (int m = 0; m < N_MELS; m++) {
        double enorm = 2.0 / (mel_f[m + 2] - mel_f[m]);
        t->mel_lo[m] = BINS; t->mel_hi[m] = 0;
        for (int k = 0; k < BINS; k++) {
            double f = (double)k * SR / N_FFT;
            double lower = (f - mel_f[m]) / (mel_f[m + 1] - mel_f[m]);
            double upper = (mel_f[m + 2] - f) / (mel_f[m + 2] - mel_f[m + 1]);
            double w = fmax(0, fmin(lower, upper)) * enorm;
            if (w > 0) {
                t->mel_w[(size_t)m * BINS + k] = (float)w;
                if (k < t->mel_lo[m]) t->mel_lo[m] = k;
                if (k + 1 > t->mel_hi[m]) t->mel_hi[m] = k + 1;
            }
        }
        if (t->mel_lo[m] > t->mel_hi[m]) t->mel_lo[m] = t->mel_hi[m] = 0;
    }
    // Chroma filters: a Gaussian bump per semitone around each bin's pitch, each bin's weights of
    // unit length, weighted by a Gaussian over octaves centred on octave 5 (about 880 Hz), C first.
    static double frq[N_FFT], width[N_FFT];
    for (int k = 1; k < N_FFT; k++) frq[k] = 12.0 * log2(((double)k * SR / N_FFT) / (440.0 / 16));
    frq[0] = frq[1] - 1.5 * 12;
    for (int k = 0; k < N_FFT - 1; k++) width[k] = fmax(frq[k + 1] - frq[k], 1.0);
    width[N_FFT - 1] = 1;
    for (int k = 0; k < BINS; k++) {
        double col[12], norm = 0;
        for (int c = 0; c < 12; c++) {
            double d = fmod(frq[k] - c + 6 + 120, 12.0) - 6;
            col[c] = exp(-0.5 * pow(2 * d / width[k], 2));
            norm += col[c] * col[c];
        }
        norm = sqrt(norm);
        double oct = exp(-0.5 * pow((frq[k] / 12 - 5.0) / 2.0, 2));
        for (int c = 0; c < 12; c++) t->chroma_w[c][k] = (float)(norm > 0 ? col[(c + 3) % 12] / norm * oct : 0);
    }
    for (int q = 0; q < N_MFCC; q++)
        for (int m = 0; m < N_MELS; m++)
            t->dct[q][m] = (float)(cos(M_PI * q * (2 * m + 1) / (2.0 * N_MELS)) * (q == 0 ? sqrt(1.0 / N_MELS) : sqrt(2.0 / N_MELS)));
    return t;
}

static fftwf_plan shared_plan;
static float *plan_in;
static fftwf_complex *plan_out;

static int prepare(void) {
    pthread_mutex_lock(&plan_lock);
    if (!shared_tables) {
        shared_tables = make_tables();
        plan_in = fftwf_alloc_real(N_FFT);
        plan_out = fftwf_alloc_complex(BINS);
        if (shared_tables && plan_in && plan_out)
            shared_plan = fftwf_plan_dft_r2c_1d(N_FFT, plan_in, plan_out, FFTW_ESTIMATE);
    }
    int ok = shared_tables != NULL && shared_plan != NULL;
    pthread_mutex_unlock(&plan_lock);
    return ok;
}

static int compare_floats(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static void mean_std(const float *v, int64_t n, int64_t stride, float *mean, float *std) {
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++) { double x = v[i * stride]; s += x; s2 += x * x; }
    double m = n ? s / n : 0, var = n ? s2 / n - m * m : 0;
    *mean = (float)m;
    *std = (float)sqrt(var > 0 ? var : 0);
}

// The order of `out->features` (version 1); `SonicFeatures` in Swift names them.
enum {
    F_TEMPO, F_TEMPO_CONF, F_ONSET_RATE, F_ZCR, F_ZCR_SD, F_CENTROID, F_CENTROID_SD, F_BANDWIDTH, F_BANDWIDTH_SD,
    F_ROLLOFF, F_ROLLOFF_SD, F_FLATNESS, F_FLATNESS_SD, F_RMS, F_RMS_SD, F_LOUDNESS_RANGE,
    F_MFCC = 16, F_MFCC_SD = 29, F_CHROMA = 42, F_KEY = 54, F_MODE = 55, F_KEY_STRENGTH = 56,
};

static const double KK_MAJOR[12] = {6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88};
static const double KK_MINOR[12] = {6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17};

static double correlation(const double *a, const double *b) {
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    for (int i = 0; i < 12; i++) { ma += a[i]; mb += b[i]; }
    ma /= 12; mb /= 12;
    for (int i = 0; i < 12; i++) { sab += (a[i] - ma) * (b[i] - mb); saa += (a[i] - ma) * (a[i] - ma); sbb += (b[i] - mb) * (b[i] - mb); }
    return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : 0;
}

int32_t shelf_sonic_analyze_samples(const float *x, int64_t n, shelf_sonic_result *out) {
    memset(out->features, 0, sizeof(out->features));
    if (n < (int64_t)(SHELF_SONIC_MIN_SECONDS * SR)) {
        snprintf(out->reason, sizeof(out->reason), "too short: %.1f s of audio (at least %.0f s are needed)", (double)n / SR, SHELF_SONIC_MIN_SECONDS);
        return out->status = SHELF_SONIC_TOO_SHORT;
    }
    float peak = 0;
    for (int64_t i = 0; i < n; i++) peak = fmaxf(peak, fabsf(x[i]));
    if (peak < 1e-4f) {
        snprintf(out->reason, sizeof(out->reason), "silent: the loudest sample is below -80 dBFS");
        return out->status = SHELF_SONIC_SILENT;
    }
    if (!prepare()) { snprintf(out->reason, sizeof(out->reason), "out of memory"); return out->status = SHELF_SONIC_NO_MEMORY; }
    const tables *t = shared_tables;
    int64_t frames = 1 + n / HOP;
    float *per = malloc(sizeof(float) * (size_t)frames * 7);    // centroid, bandwidth, rolloff, flatness, zcr, rms dB, spare
    float *mel = malloc(sizeof(float) * (size_t)frames * N_MELS); // mel power, then dB
    float *in = fftwf_alloc_real(N_FFT);
    fftwf_complex *spec = fftwf_alloc_complex(BINS);
    double chroma_sum[12] = {0};
    if (!per || !mel || !in || !spec) {
        free(per); free(mel); fftwf_free(in); fftwf_free(spec);
        snprintf(out->reason, sizeof(out->reason), "out of memory");
        return out->status = SHELF_SONIC_NO_MEMORY;
    }
    float mag[BINS], pw[BINS];
    float mel_max = -INFINITY;
    for (int64_t f = 0; f < frames; f++) {
        int64_t first = f * HOP - N_FFT / 2;
        double sq = 0; int crossings = 0; int prev_neg = 0;
        for (int i = 0; i < N_FFT; i++) {
            int64_t j = first + i;
            float v = (j >= 0 && j < n) ? x[j] : 0;
            in[i] = v * t->window[i];
            sq += (double)v * v;
            // Zero crossings pad by repeating the edge samples, as librosa's do.
            float z = x[j < 0 ? 0 : (j >= n ? n - 1 : j)];
            if (fabsf(z) <= 1e-10f) z = 0;
            int neg = signbit(z) != 0;
            if (i > 0 && neg != prev_neg) crossings++;
            prev_neg = neg;
        }
        fftwf_execute_dft_r2c(shared_plan, in, spec);
        double sum = 0, wsum = 0, logsum = 0, psum = 0;
        for (int k = 0; k < BINS; k++) {
            float re = spec[k][0], im = spec[k][1];
            pw[k] = re * re + im * im;
            mag[k] = sqrtf(pw[k]);
            sum += mag[k];
            wsum += mag[k] * t->freqs[k];
        }
        // The geometric mean takes one log per 8 bins: a product of 8 powers floored at 1e-10
        // stays well inside a double's range.
        for (int k = 0; k < BINS; k += 8) {
            double prod = 1;
            for (int j = k; j < k + 8 && j < BINS; j++) {
                double p = pw[j] > 1e-10f ? pw[j] : 1e-10;
                prod *= p;
                psum += p;
            }
            logsum += log(prod);
        }
        double centroid = sum > 1e-30 ? wsum / sum : 0, bw = 0, rolloff = 0;
        if (sum > 1e-30) {
            double acc = 0, threshold = 0.85 * sum;
            for (int k = 0; k < BINS; k++) {
                double d = t->freqs[k] - centroid;
                bw += mag[k] / sum * d * d;
            }
            for (int k = 0; k < BINS; k++) { acc += mag[k]; if (acc >= threshold) { rolloff = t->freqs[k]; break; } }
        }
        float *p = per + f * 7;
        p[0] = (float)centroid;
        p[1] = (float)sqrt(bw);
        p[2] = (float)rolloff;
        p[3] = (float)(exp(logsum / BINS) / (psum / BINS));
        p[4] = (float)crossings / N_FFT;
        double rms = sqrt(sq / N_FFT);
        p[5] = (float)(20 * log10(rms > 1e-5 ? rms : 1e-5));
        float *m = mel + f * N_MELS;
        for (int b = 0; b < N_MELS; b++) {
            float acc = 0;
            const float *w = t->mel_w + (size_t)b * BINS;
            for (int k = t->mel_lo[b]; k < t->mel_hi[b]; k++) acc += w[k] * pw[k];
            m[b] = (float)(10 * log10(acc > 1e-10 ? acc : 1e-10));
            if (m[b] > mel_max) mel_max = m[b];
        }
        double c[12], cmax = 0;
        for (int j = 0; j < 12; j++) {
            float acc = 0;
            for (int k = 0; k < BINS; k++) acc += t->chroma_w[j][k] * pw[k];
            c[j] = acc;
            if (acc > cmax) cmax = acc;
        }
        if (cmax > 1e-30)
            for (int j = 0; j < 12; j++) chroma_sum[j] += c[j] / cmax;
    }
    fftwf_free(in); fftwf_free(spec);
    float *F = out->features;
    mean_std(per + 0, frames, 7, &F[F_CENTROID], &F[F_CENTROID_SD]);
    mean_std(per + 1, frames, 7, &F[F_BANDWIDTH], &F[F_BANDWIDTH_SD]);
    mean_std(per + 2, frames, 7, &F[F_ROLLOFF], &F[F_ROLLOFF_SD]);
    mean_std(per + 3, frames, 7, &F[F_FLATNESS], &F[F_FLATNESS_SD]);
    mean_std(per + 4, frames, 7, &F[F_ZCR], &F[F_ZCR_SD]);
    mean_std(per + 5, frames, 7, &F[F_RMS], &F[F_RMS_SD]);
    // Loudness range: the spread of the frames' RMS between the 10th and 95th percentiles, frames
    // below -70 dBFS left out (as EBU R128's LRA leaves silence out).
    int64_t loud = 0;
    for (int64_t f = 0; f < frames; f++) if (per[f * 7 + 5] > -70) per[loud++ * 7 + 6] = per[f * 7 + 5];
    if (loud >= 2) {
        float *vals = malloc(sizeof(float) * (size_t)loud);
        if (vals) {
            for (int64_t i = 0; i < loud; i++) vals[i] = per[i * 7 + 6];
            qsort(vals, (size_t)loud, sizeof(float), compare_floats);
            F[F_LOUDNESS_RANGE] = vals[(int64_t)(0.95 * (loud - 1))] - vals[(int64_t)(0.10 * (loud - 1))];
            free(vals);
        }
    }
    // MFCCs: the mel spectrum in dB, floored 80 dB under its loudest value, through an orthonormal DCT-II.
    float floor_db = mel_max - 80;
    double msum[N_MFCC] = {0}, msq[N_MFCC] = {0};
    for (int64_t f = 0; f < frames; f++) {
        float *m = mel + f * N_MELS;
        for (int b = 0; b < N_MELS; b++) if (m[b] < floor_db) m[b] = floor_db;
        for (int q = 0; q < N_MFCC; q++) {
            float acc = 0;
            for (int b = 0; b < N_MELS; b++) acc += t->dct[q][b] * m[b];
            msum[q] += acc; msq[q] += acc * acc;
        }
    }
    for (int q = 0; q < N_MFCC; q++) {
        double mean = msum[q] / frames, var = msq[q] / frames - mean * mean;
        F[F_MFCC + q] = (float)mean;
        F[F_MFCC_SD + q] = (float)sqrt(var > 0 ? var : 0);
    }
    // Onset strength: the mean rise of the mel bands (dB) from one frame to the next, lagged by
    // three frames as librosa's centred envelope is.
    float *onset = per; // reuses the first column's storage: one float per frame
    for (int64_t f = 0; f < frames; f++) {
        double rise = 0;
        if (f >= 3) {
            const float *a = mel + (f - 2) * N_MELS, *b = mel + (f - 3) * N_MELS;
            for (int k = 0; k < N_MELS; k++) { double d = a[k] - b[k]; if (d > 0) rise += d; }
        }
        onset[f] = (float)(rise / N_MELS);
    }
    free(mel);
    // Tempo: the onset envelope's autocorrelation over 8 s Hann windows (every 8th frame), each
    // normalised by its zero lag, averaged, weighted by a log-normal prior around 120 BPM.
    double ac[TEMPO_WINDOW] = {0};
    int windows = 0;
    float seg[TEMPO_WINDOW];
    for (int64_t c = 0; c < frames; c += TEMPO_STEP) {
        for (int i = 0; i < TEMPO_WINDOW; i++) {
            int64_t j = c - TEMPO_WINDOW / 2 + i;
            seg[i] = (j >= 0 && j < frames ? onset[j] : 0) * (float)(0.5 - 0.5 * cos(2 * M_PI * i / TEMPO_WINDOW));
        }
        double a0 = 0;
        for (int i = 0; i < TEMPO_WINDOW; i++) a0 += seg[i] * seg[i];
        if (a0 <= 1e-20) continue;
        for (int lag = 0; lag < TEMPO_WINDOW; lag++) {
            float acc = 0;
            for (int i = lag; i < TEMPO_WINDOW; i++) acc += seg[i] * seg[i - lag];
            ac[lag] += acc / a0;
        }
        windows++;
    }
    double best_score = -INFINITY; int best = 0;
    for (int lag = 1; lag < TEMPO_WINDOW && windows > 0; lag++) {
        double bpm = 60.0 * SR / (HOP * lag);
        if (bpm >= 320) continue;
        double prior = -0.5 * pow(log2(bpm) - log2(120.0), 2);
        double score = log1p(1e6 * (ac[lag] / windows)) + prior;
        if (score > best_score) { best_score = score; best = lag; }
    }
    if (best > 0) {
        F[F_TEMPO] = (float)(60.0 * SR / (HOP * best));
        F[F_TEMPO_CONF] = (float)fmin(1, fmax(0, ac[best] / windows));
    }
    // Onsets: peaks of the envelope scaled to 0..1 that top their neighbourhood's mean by 0.07.
    float omin = INFINITY, omax = -INFINITY;
    for (int64_t f = 0; f < frames; f++) { omin = fminf(omin, onset[f]); omax = fmaxf(omax, onset[f]); }
    int64_t onsets = 0, last = -1000;
    if (omax > omin) {
        for (int64_t f = 0; f < frames; f++) {
            float v = (onset[f] - omin) / (omax - omin);
            int is_max = 1; double avg = 0; int cnt = 0;
            for (int64_t j = f - 1; j < f + 1; j++) if (j >= 0 && j < frames && (onset[j] - omin) / (omax - omin) > v) is_max = 0;
            for (int64_t j = f - 4; j < f + 5; j++) if (j >= 0 && j < frames) { avg += (onset[j] - omin) / (omax - omin); cnt++; }
            if (is_max && v >= avg / cnt + 0.07 && f - last > 1) { onsets++; last = f; }
        }
    }
    F[F_ONSET_RATE] = (float)(onsets / ((double)n / SR));
    free(per);
    // Chroma: the mean of the frames' pitch-class profiles (each scaled to its loudest class),
    // and the key whose Krumhansl-Kessler profile correlates best with it.
    double prof[12], rot[12], best_r = -2;
    for (int j = 0; j < 12; j++) { prof[j] = chroma_sum[j] / frames; F[F_CHROMA + j] = (float)prof[j]; }
    for (int tonic = 0; tonic < 12; tonic++)
        for (int mode = 0; mode < 2; mode++) {
            for (int j = 0; j < 12; j++) rot[j] = prof[(tonic + j) % 12];
            double r = correlation(rot, mode ? KK_MAJOR : KK_MINOR);
            if (r > best_r) { best_r = r; F[F_KEY] = (float)tonic; F[F_MODE] = (float)mode; F[F_KEY_STRENGTH] = (float)r; }
        }
    out->reason[0] = 0;
    return out->status = SHELF_SONIC_OK;
}

// MARK: - Decoding

typedef struct {
    float *data;
    int64_t count, capacity, limit;
} pcm_buffer;

static int pcm_append(pcm_buffer *b, const float *src, int64_t count) {
    if (b->count + count > b->limit) count = b->limit - b->count;
    if (count <= 0) return 1;
    if (b->count + count > b->capacity) {
        int64_t cap = b->capacity ? b->capacity * 2 : SR * 60;
        while (cap < b->count + count) cap *= 2;
        if (cap > b->limit) cap = b->limit;
        float *d = realloc(b->data, sizeof(float) * (size_t)cap);
        if (!d) return 0;
        b->data = d; b->capacity = cap;
    }
    memcpy(b->data + b->count, src, sizeof(float) * (size_t)count);
    b->count += count;
    return 1;
}

static void av_reason(char *reason, size_t size, const char *what, int err) {
    char text[128];
    av_strerror(err, text, sizeof(text));
    snprintf(reason, size, "%s: %s", what, text);
}

int32_t shelf_sonic_analyze(const char *path, double start, double end,
                            const volatile int32_t *cancel, const char *pcm_out, shelf_sonic_result *out) {
    memset(out, 0, sizeof(*out));
    AVFormatContext *fmt = NULL;
    AVCodecContext *cc = NULL;
    SwrContext *mono = NULL;
    AVPacket *pkt = av_packet_alloc();
    AVFrame *frame = av_frame_alloc();
    pcm_buffer pcm = {NULL, 0, 0, (int64_t)(SHELF_SONIC_MAX_SECONDS * SR)};
    float *mono_chunk = NULL;
    int mono_cap = 0;
    int status = SHELF_SONIC_UNDECODABLE;
    int err;
    av_log_set_level(AV_LOG_QUIET);
    if (!pkt || !frame) { status = SHELF_SONIC_NO_MEMORY; snprintf(out->reason, sizeof(out->reason), "out of memory"); goto done; }
    if ((err = avformat_open_input(&fmt, path, NULL, NULL)) < 0) { av_reason(out->reason, sizeof(out->reason), "cannot open", err); goto done; }
    if ((err = avformat_find_stream_info(fmt, NULL)) < 0) { av_reason(out->reason, sizeof(out->reason), "cannot read the streams", err); goto done; }
    const AVCodec *codec = NULL;
    int si = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, -1, -1, &codec, 0);
    if (si < 0 || !codec) { snprintf(out->reason, sizeof(out->reason), "no audio stream FFmpeg can decode"); goto done; }
    AVStream *st = fmt->streams[si];
    for (unsigned i = 0; i < fmt->nb_streams; i++) if ((int)i != si) fmt->streams[i]->discard = AVDISCARD_ALL;
    cc = avcodec_alloc_context3(codec);
    if (!cc || avcodec_parameters_to_context(cc, st->codecpar) < 0) { snprintf(out->reason, sizeof(out->reason), "cannot set up the decoder"); goto done; }
    cc->pkt_timebase = st->time_base;
    if ((err = avcodec_open2(cc, codec, NULL)) < 0) { av_reason(out->reason, sizeof(out->reason), "cannot open the decoder", err); goto done; }
    if (cc->sample_rate <= 0 || cc->ch_layout.nb_channels <= 0 || cc->ch_layout.nb_channels > 64) {
        snprintf(out->reason, sizeof(out->reason), "no sample rate or channels in the audio stream"); goto done;
    }
    AVChannelLayout in_layout;
    if (cc->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC) av_channel_layout_default(&in_layout, cc->ch_layout.nb_channels);
    else av_channel_layout_copy(&in_layout, &cc->ch_layout);
    AVChannelLayout mono_layout = AV_CHANNEL_LAYOUT_MONO;
    if (swr_alloc_set_opts2(&mono, &mono_layout, AV_SAMPLE_FMT_FLT, SR, &in_layout, cc->sample_fmt, cc->sample_rate, 0, NULL) < 0 || swr_init(mono) < 0) {
        av_channel_layout_uninit(&in_layout);
        snprintf(out->reason, sizeof(out->reason), "cannot convert %d channels at %d Hz", cc->ch_layout.nb_channels, cc->sample_rate); goto done;
    }
    int channels = in_layout.nb_channels;
    av_channel_layout_uninit(&in_layout);
    // Timestamps count from the stream's start time (non-zero in many MP3, MP4 and Ogg files);
    // `start` and `end` count from the first sample.
    double origin = st->start_time != AV_NOPTS_VALUE ? st->start_time * av_q2d(st->time_base) : 0;
    enum AVSampleFormat in_format = cc->sample_fmt;
    int in_rate = cc->sample_rate;
    if (start > 0) {
        int64_t ts = av_rescale_q((int64_t)((start + origin) * AV_TIME_BASE), AV_TIME_BASE_Q, st->time_base);
        if (av_seek_frame(fmt, si, ts, AVSEEK_FLAG_BACKWARD) >= 0) avcodec_flush_buffers(cc);
    }
    double tb = av_q2d(st->time_base);
    int64_t decoded = 0; // native-rate samples passed on
    double position = start > 0 ? -1 : 0; // seconds at the next frame's start when timestamps are missing
    int eof = 0, stop = 0, decode_errors = 0;
    while (!stop) {
        if (cancel && *cancel) { status = SHELF_SONIC_CANCELLED; snprintf(out->reason, sizeof(out->reason), "cancelled"); goto done; }
        if (!eof) {
            err = av_read_frame(fmt, pkt);
            if (err < 0) { eof = 1; avcodec_send_packet(cc, NULL); }
            else {
                if (pkt->stream_index == si) {
                    err = avcodec_send_packet(cc, pkt);
                    if (err < 0 && err != AVERROR(EAGAIN) && ++decode_errors > 100) { av_reason(out->reason, sizeof(out->reason), "cannot decode", err); av_packet_unref(pkt); goto done; }
                }
                av_packet_unref(pkt);
            }
        }
        for (;;) {
            err = avcodec_receive_frame(cc, frame);
            if (err == AVERROR(EAGAIN)) {
                if (eof) stop = 1;  // drained: nothing more will come
                break;
            }
            if (err == AVERROR_EOF) { stop = 1; break; }
            if (err < 0) { if (++decode_errors > 100) { av_reason(out->reason, sizeof(out->reason), "cannot decode", err); goto done; } break; }
            int rate = in_rate;
            // The resampler was set up for the first frame's layout: a frame that changes it
            // (a decoder switching sample format mid-stream) is left out rather than misread.
            if (frame->sample_rate != rate || frame->ch_layout.nb_channels != channels || frame->format != in_format) {
                av_frame_unref(frame);
                continue;
            }
            double frame_start = frame->best_effort_timestamp != AV_NOPTS_VALUE ? frame->best_effort_timestamp * tb - origin : (position >= 0 ? position : start);
            int skip = 0, take = frame->nb_samples;
            if (start > 0 && frame_start < start) skip = (int)fmin(frame->nb_samples, (start - frame_start) * rate + 0.5);
            if (end > 0) {
                double stop_at = (end - frame_start) * rate;
                if (stop_at < take) { take = stop_at > skip ? (int)stop_at : skip; stop = 1; }
            }
            position = frame_start + (double)frame->nb_samples / rate;
            int count = take - skip;
            if (count > 0) {
                const uint8_t *planes[64];
                int bps = av_get_bytes_per_sample(frame->format);
                int planar = av_sample_fmt_is_planar(frame->format);
                for (int c = 0; c < (planar ? channels : 1); c++) planes[c] = frame->extended_data[c] + (size_t)skip * bps * (planar ? 1 : channels);
                if (pcm.count < pcm.limit) {
                    int want = (int)swr_get_out_samples(mono, count) + 16;
                    if (mono_cap < want) { free(mono_chunk); mono_cap = want; mono_chunk = malloc(sizeof(float) * (size_t)want); if (!mono_chunk) { mono_cap = 0; status = SHELF_SONIC_NO_MEMORY; snprintf(out->reason, sizeof(out->reason), "out of memory"); goto done; } }
                    uint8_t *o = (uint8_t *)mono_chunk;
                    int got = swr_convert(mono, &o, want, planes, count);
                    if (got > 0 && !pcm_append(&pcm, mono_chunk, got)) { status = SHELF_SONIC_NO_MEMORY; snprintf(out->reason, sizeof(out->reason), "out of memory"); goto done; }
                }
                decoded += count;
            }
            av_frame_unref(frame);
            if (stop) break;
            if (pcm.count >= pcm.limit) stop = 1;
        }
    }
    if (pcm.count < pcm.limit && mono_cap > 0) {
        uint8_t *o = (uint8_t *)mono_chunk;
        int got = swr_convert(mono, &o, mono_cap, NULL, 0);
        if (got > 0) pcm_append(&pcm, mono_chunk, got);
    }
    out->seconds = (double)decoded / cc->sample_rate;
    if (decoded == 0) { snprintf(out->reason, sizeof(out->reason), "no audio could be decoded"); goto done; }
    if (pcm_out) {
        FILE *f = fopen(pcm_out, "wb");
        if (f) { fwrite(pcm.data, sizeof(float), (size_t)pcm.count, f); fclose(f); }
    }
    status = shelf_sonic_analyze_samples(pcm.data, pcm.count, out);
done:
    out->status = status;
    swr_free(&mono);
    avcodec_free_context(&cc);
    avformat_close_input(&fmt);
    av_packet_free(&pkt);
    av_frame_free(&frame);
    free(pcm.data); free(mono_chunk);
    return status;
}


// A bounded max-heap of (distance, row), the worst on top: the nearest `limit` of a scan.
typedef struct { int32_t d; int64_t row; } near_item;

static int worse(near_item a, near_item b) { return a.d != b.d ? a.d > b.d : a.row > b.row; }

static void sift_down(near_item *heap, int32_t n, int32_t i) {
    for (;;) {
        int32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && worse(heap[l], heap[m])) m = l;
        if (r < n && worse(heap[r], heap[m])) m = r;
        if (m == i) return;
        near_item t = heap[i]; heap[i] = heap[m]; heap[m] = t;
        i = m;
    }
}

static int compare_near(const void *a, const void *b) {
    near_item x = *(const near_item *)a, y = *(const near_item *)b;
    return worse(x, y) ? 1 : worse(y, x) ? -1 : 0;
}

// Built twice, for AVX2 and for baseline x86-64 (SSE2), the loader picking one at run time: the
// scan is 3.5× faster with 256-bit integer multiply-adds, and a binary must still run on any CPU.
// Not under ThreadSanitizer: the loader calls the picking function (an ifunc resolver) before
// TSan's runtime is set up, and its instrumented entry crashed every test binary at start.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SHELF_THREAD_SANITIZER 1
#endif
#endif
#if defined(__x86_64__) && defined(__clang__) && !defined(SHELF_THREAD_SANITIZER)
#define SHELF_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SHELF_CLONES
#endif

SHELF_CLONES
int32_t shelf_sonic_nearest(const int8_t *vectors, int64_t count, int32_t dims, const int8_t *query, const int32_t *groups, int32_t skip_group,
                            int32_t limit, int64_t *rows, int32_t *distances) {
    if (limit <= 0) return 0;
    near_item *heap = malloc(sizeof(near_item) * (size_t)limit);
    if (!heap) return -1;
    int32_t n = 0;
    // The first 16 numbers (tempo, rhythm, brightness, level: the heaviest weights) are a lower
    // bound of the whole distance: once the heap is full, most rows stop there.
    int32_t head = dims < 16 ? dims : 16;
    for (int64_t i = 0; i < count; i++) {
        const int8_t *v = vectors + i * dims;
        int32_t acc = 0;
        if (head == 16) {
            for (int32_t d = 0; d < 16; d++) { int32_t diff = (int32_t)v[d] - query[d]; acc += diff * diff; }
        } else {
            for (int32_t d = 0; d < head; d++) { int32_t diff = (int32_t)v[d] - query[d]; acc += diff * diff; }
        }
        if (n == limit && acc > heap[0].d) continue;
        for (int32_t d = head; d < dims; d++) { int32_t diff = (int32_t)v[d] - query[d]; acc += diff * diff; }
        if (n == limit && acc > heap[0].d) continue;
        if (groups[i] == skip_group) continue;
        near_item item = {acc, i};
        if (n < limit) {
            int32_t c = n++;
            heap[c] = item;
            while (c > 0 && worse(heap[c], heap[(c - 1) / 2])) {
                near_item t = heap[c]; heap[c] = heap[(c - 1) / 2]; heap[(c - 1) / 2] = t;
                c = (c - 1) / 2;
            }
        } else if (worse(heap[0], item)) {
            heap[0] = item;
            sift_down(heap, n, 0);
        }
    }
    qsort(heap, (size_t)n, sizeof(near_item), compare_near);
    for (int32_t i = 0; i < n; i++) { rows[i] = heap[i].row; distances[i] = heap[i].d; }
    free(heap);
    return n;
}

SHELF_CLONES
int32_t shelf_sonic_path_candidates(const int8_t *vectors, int64_t count, int32_t dims, const int8_t *a, const int8_t *b, const int32_t *groups,
                                    int32_t skip_a, int32_t skip_b, int32_t steps, int32_t keep, int64_t *rows, double *costs) {
    int32_t span = 0;
    for (int32_t d = 0; d < dims; d++) { int32_t x = (int32_t)b[d] - a[d]; span += x * x; }
    for (int64_t i = 0; i < (int64_t)steps * keep; i++) { rows[i] = -1; costs[i] = INFINITY; }
    if (span == 0 || steps <= 0) return 0;
    for (int64_t i = 0; i < count; i++) {
        const int8_t *v = vectors + i * dims;
        int32_t da = 0, dot = 0;
        for (int32_t d = 0; d < dims; d++) {
            int32_t x = (int32_t)v[d] - a[d];
            da += x * x;
            dot += x * ((int32_t)b[d] - a[d]);
        }
        double t = (double)dot / span;
        if (t <= 0 || t >= 1 || groups[i] == skip_a || groups[i] == skip_b) continue;
        int32_t slot = (int32_t)lround(t * (steps + 1)) - 1;
        if (slot < 0 || slot >= steps) continue;
        double target = (double)(slot + 1) / (steps + 1);
        // The squared distance to the point `target` of the way along the line.
        double cost = da - 2 * target * dot + target * target * span;
        int64_t *r = rows + (int64_t)slot * keep;
        double *c = costs + (int64_t)slot * keep;
        if (cost >= c[keep - 1]) continue;
        int32_t j = keep - 1;
        while (j > 0 && c[j - 1] > cost) { c[j] = c[j - 1]; r[j] = r[j - 1]; j--; }
        c[j] = cost; r[j] = i;
    }
    return steps * keep;
}
