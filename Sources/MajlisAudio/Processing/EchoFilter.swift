import Foundation

/// An adaptive filter that learns the echo path from what was played (the reference) to what
/// the microphone heard, and takes its estimate of the echo out: a partitioned-block
/// frequency-domain NLMS filter (overlap-save, blocks of 240 samples in 512-point transforms,
/// each 5 ms partition normalized by the reference's power in all partitions at that frequency).
///
/// Two filters, as in Speex's and WebRTC's cancellers: the background one adapts on every block,
/// at a step per bin from a diagonal Kalman gain (`steps`); the foreground one, whose output is
/// used, is the background's last copy made when the background's error was under 70% of the
/// foreground's, each averaged over about a second.
/// While the near end talks, the background learns the voice as if it were echo, its error grows,
/// and it is set back to the foreground instead; the foreground never learns a voice.
///
/// First chosen, with a fixed step, on espeak-ng speech through a room ringing for 280 ms (echo 6 dB under the playback) with
/// double talk in the middle, the filter alone: 22-25 dB of echo taken out 5-8 s into far-end
/// speech, 37-39 dB after the double talk, the near end during it PESQ-WB 3.61-3.70 (Speex's
/// filter over the same: 20-21 dB, 29 dB and 2.38-2.43). A step of 0.5: 17 dB and 3.00; 1.3, or
/// the foreground's copy judged over 50 ms instead of a second: it took the near end for echo
/// (PESQ-WB 1.1); the output of whichever filter erred less in each block: 1.3. Copying at 70%
/// instead of 50%: 1-2 dB more 5 s in. Constraining each partition every 8th block instead of
/// every block costs nothing measurable; every 60th, 3 dB after double talk. Its convergence is
/// the filter's length in samples: 2 s of white noise leave a 300 ms filter at 20 dB, a 100 ms one
/// over 50.
struct EchoFilter {
    static let block = 240
    static let size = 512
    static let bins = size / 2 + 1
    /// The background filter's NLMS step, normalized by the reference's power in each bin, lies
    /// in `steps`, set per bin by a diagonal Kalman gain (as WebRTC AEC3's refined filter): the
    /// filter's uncertainty of that bin (`uncertain` at first, no less than `certain`) against the
    /// error it sees there, counted once per partition. Each block lowers the uncertainty by what
    /// it taught, and `drift` of the echo path's power (no less than `quietestPath`) raises it
    /// again: the converged figure while the background errs no more than the foreground, the
    /// diverged one otherwise. Bins whose reference power (all partitions) is under `gate` do not
    /// adapt. `share` is the part of a transform the error's block fills.
    /// Measured (`majlis bench audio --only echo --runs 6`, six rooms, median / worst; before: a
    /// fixed step of 1): espeak-ng's en-us+f3, ERLE 5 s in 30.5 / 28.7 dB (19.0 / 8.9), after
    /// double talk 51.4 / 35.5 (18.9 / 11.0), double talk PESQ-WB 3.05 / 2.57 (2.44 / 1.55);
    /// en+m3 38.7 / 34.3 (38.5 / 32.1), 64.8 / 60.4 (64.2 / 61.0), 3.71 / 3.46 (3.71 / 3.49);
    /// the default voice 38.9 / 36.0 (38.6 / 35.7), 62.9 / 61.0, 3.73 / 3.68 (as before). A
    /// change of a rounding moves single rooms by 1-2 dB: the filter's choices compound.
    /// The gain unbounded (steps up to 2.1): f3 30.1 / 21.3, m3 32.3 / 28.1 (large steps leave
    /// the filter noisier); at most 1: f3 22.9 / 17.1 (slow where the voice's harmonics are
    /// sparse); no foreground (the background's output used): double talk PESQ-WB 1.58.
    static let steps = 0.8...1.4
    static let uncertain = 2.0
    static let certain = 0.001
    static let drift = (converged: 0.0005, diverged: 0.05)
    static let quietestPath = 0.02
    static let gate = 1e7
    static let share = Double(block) / Double(size)
    /// The averages of the two filters' errors: about a second of blocks.
    static let errorMemory = 0.98
    /// One filter's error under this share of the other's: the foreground takes the
    /// background's weights (or the background the foreground's, when it diverged).
    static let better = 0.7
    /// And the foreground takes them only while the background takes at least 6 dB out of what
    /// the microphone hears (its error under this share of it, averaged alike): in double talk the
    /// background learns the near voice too, and can err less than the foreground without
    /// cancelling anything. Measured through three rooms (`majlis bench audio --voice`): espeak-ng's
    /// en-us+f3, ERLE 5 s after double talk -1.5-4.5 dB without this, 20.3-44.4 with it, the near
    /// end of double talk PESQ-WB 1.18-1.26 against 2.49-3.09; en+m3's near end 2.88-3.68 against
    /// 3.49-3.73; the default voice unchanged. 10 dB instead of 6: the same.
    static let cancelling = 0.25
    /// Each partition is held to its 240 samples every this many blocks, in turn.
    static let constraintEvery = 8

    let partitions: Int
    /// The reference's last `size` samples.
    private var input = [Double](repeating: 0, count: size)
    /// The last `partitions` spectra of `input`, newest at `head` (flat: partition * bins + bin).
    private var spectraReal: [Double]
    private var spectraImaginary: [Double]
    private var head = 0
    private var background: (real: [Double], imaginary: [Double])
    private var foreground: (real: [Double], imaginary: [Double])
    private var backgroundError = 1.0
    private var foregroundError = 1.0
    /// What the microphone heard, averaged as the errors are.
    private var heardAverage = 1.0
    private var blocks = 0
    /// How unsure the background is of each bin's weights: a Kalman filter's error variance,
    /// |W - W_true|^2 in the weights' units, one for all partitions.
    private var uncertainty = [Double](repeating: EchoFilter.uncertain, count: bins)

    /// A filter `milliseconds` long.
    init(milliseconds: Int) {
        partitions = max(1, (milliseconds * AudioFormat.sampleRate / 1_000 + Self.block - 1) / Self.block)
        let zeros = [Double](repeating: 0, count: partitions * Self.bins)
        spectraReal = zeros
        spectraImaginary = zeros
        background = (zeros, zeros)
        foreground = (zeros, zeros)
    }

    /// Moves the echo path learnt `shift` partitions earlier (the reference is now that many
    /// blocks further behind what was played; negative: nearer), and takes `past`, the reference's samples up to now under
    /// its new alignment (the last `partitions * block + size - block` of them; fewer: silence
    /// before them), as what was played.
    mutating func realign(by shift: Int, past: [Double]) {
        let (size, bins, block) = (Self.size, Self.bins, Self.block)
        let needed = partitions * block + size - block
        let samples = [Double](repeating: 0, count: max(0, needed - past.count)) + past.suffix(needed)
        input = Array(samples.suffix(size))
        for partition in 0..<partitions {
            let end = samples.count - partition * block
            var real = Array(samples[end - size..<end])
            var imaginary = [Double](repeating: 0, count: size)
            FFT.transform(&real, &imaginary, inverse: false)
            let slot = (head - partition + partitions) % partitions * bins
            for bin in 0..<bins {
                spectraReal[slot + bin] = real[bin]
                spectraImaginary[slot + bin] = imaginary[bin]
            }
        }
        func moved(_ weights: [Double]) -> [Double] {
            var result = [Double](repeating: 0, count: weights.count)
            for partition in 0..<partitions where partition + shift >= 0 && partition + shift < partitions {
                let from = (partition + shift) * bins
                result.replaceSubrange(partition * bins..<(partition + 1) * bins, with: weights[from..<from + bins])
            }
            return result
        }
        background = (moved(background.real), moved(background.imaginary))
        foreground = (moved(foreground.real), moved(foreground.imaginary))
    }

    /// One block: what was played as it reaches the microphone now (`reference`) and what the
    /// microphone heard, `block` samples each. Returns the microphone less the foreground's echo
    /// estimate, and that estimate.
    mutating func process(reference: ArraySlice<Double>, microphone: ArraySlice<Double>) -> (output: [Double], echo: [Double]) {
        let (size, bins, block) = (Self.size, Self.bins, Self.block)
        input.removeFirst(block)
        input.append(contentsOf: reference)
        var real = input
        var imaginary = [Double](repeating: 0, count: size)
        FFT.transform(&real, &imaginary, inverse: false)
        head = (head + 1) % partitions
        for bin in 0..<bins {
            spectraReal[head * bins + bin] = real[bin]
            spectraImaginary[head * bins + bin] = imaginary[bin]
        }

        // Both filters' outputs in one inverse transform: background + i foreground.
        var backgroundEstimate = (real: [Double](repeating: 0, count: bins), imaginary: [Double](repeating: 0, count: bins))
        var foregroundEstimate = backgroundEstimate
        var power = [Double](repeating: 0, count: bins)
        for partition in 0..<partitions {
            let slot = (head - partition + partitions) % partitions * bins
            let weights = partition * bins
            for bin in 0..<bins {
                let (xr, xi) = (spectraReal[slot + bin], spectraImaginary[slot + bin])
                let (br, bi) = (background.real[weights + bin], background.imaginary[weights + bin])
                let (fr, fi) = (foreground.real[weights + bin], foreground.imaginary[weights + bin])
                backgroundEstimate.real[bin] += br * xr - bi * xi
                backgroundEstimate.imaginary[bin] += br * xi + bi * xr
                foregroundEstimate.real[bin] += fr * xr - fi * xi
                foregroundEstimate.imaginary[bin] += fr * xi + fi * xr
                power[bin] += xr * xr + xi * xi
            }
        }
        var (estimateReal, estimateImaginary) = Self.joined(backgroundEstimate, foregroundEstimate)
        FFT.transform(&estimateReal, &estimateImaginary, inverse: true)
        var backgroundOutput = [Double](repeating: 0, count: block)
        var output = [Double](repeating: 0, count: block)
        var echo = [Double](repeating: 0, count: block)
        var errorSpectrum = [Double](repeating: 0, count: size)
        var backgroundEnergy = 0.0, foregroundEnergy = 0.0, heard = 0.0
        for index in 0..<block {
            let sample = microphone[microphone.startIndex + index]
            let backgroundEcho = estimateReal[size - block + index] / Double(size)
            echo[index] = estimateImaginary[size - block + index] / Double(size)
            backgroundOutput[index] = sample - backgroundEcho
            output[index] = sample - echo[index]
            errorSpectrum[size - block + index] = backgroundOutput[index]
            backgroundEnergy += backgroundOutput[index] * backgroundOutput[index]
            foregroundEnergy += output[index] * output[index]
            heard += sample * sample
        }

        // The background's step: its error against the reference, normalized per frequency.
        var errorImaginary = [Double](repeating: 0, count: size)
        FFT.transform(&errorSpectrum, &errorImaginary, inverse: false)
        let mean = power.reduce(0, +) / Double(bins)
        // The step in each bin: a diagonal Kalman gain, large while the filter is unsure of that
        // bin and small where the error holds more than the echo it has not learnt (the near end
        // talking, noise), held within `steps`.
        var steps = [Double](repeating: 0, count: bins)
        let converged = backgroundError <= foregroundError
        for bin in 0..<bins where power[bin] > Self.gate {
            let x2 = power[bin] + 0.01 * mean + 1_000
            let e2 = errorSpectrum[bin] * errorSpectrum[bin] + errorImaginary[bin] * errorImaginary[bin]
            let p = uncertainty[bin]
            let gain = p / (Self.share * p * x2 + Double(partitions) * e2)
            steps[bin] = min(max(gain * x2, Self.steps.lowerBound), Self.steps.upperBound) / x2
            // What this block taught each partition (its share of the reference), and how much the
            // echo path may have moved since: a little of its power, more when the background errs
            // more than the foreground.
            var path = 0.0
            for partition in 0..<partitions {
                let index = partition * bins + bin
                path += background.real[index] * background.real[index] + background.imaginary[index] * background.imaginary[index]
            }
            let drift = (converged ? Self.drift.converged : Self.drift.diverged) * max(path, Self.quietestPath)
            uncertainty[bin] = min(Self.uncertain, max(Self.certain, p - Self.share * gain * x2 / Double(partitions) * p + drift))
        }
        for partition in 0..<partitions {
            let slot = (head - partition + partitions) % partitions * bins
            let weights = partition * bins
            for bin in 0..<bins {
                let scale = steps[bin]
                let (xr, xi) = (spectraReal[slot + bin], spectraImaginary[slot + bin])
                let (er, ei) = (errorSpectrum[bin], errorImaginary[bin])
                // e conj(x)
                background.real[weights + bin] += scale * (er * xr + ei * xi)
                background.imaginary[weights + bin] += scale * (ei * xr - er * xi)
            }
        }
        blocks += 1
        var constrained: [Int] = []
        for partition in 0..<partitions where (partition + blocks) % Self.constraintEvery == 0 { constrained.append(partition) }
        var index = 0
        while index < constrained.count {
            constrain(constrained[index], index + 1 < constrained.count ? constrained[index + 1] : nil)
            index += 2
        }

        backgroundError = Self.errorMemory * backgroundError + (1 - Self.errorMemory) * backgroundEnergy
        foregroundError = Self.errorMemory * foregroundError + (1 - Self.errorMemory) * foregroundEnergy
        heardAverage = Self.errorMemory * heardAverage + (1 - Self.errorMemory) * heard
        if backgroundError < Self.better * foregroundError && backgroundError < Self.cancelling * heardAverage {
            foreground = background
            foregroundError = backgroundError
        } else if foregroundError < Self.better * backgroundError && heard > 0 {
            background = foreground
            backgroundError = foregroundError
        }
        return (output, echo)
    }

    /// Holds the background's partitions `first` and `second` to `block` samples of time: both
    /// through one inverse and one forward transform (first + i second).
    private mutating func constrain(_ first: Int, _ second: Int?) {
        let (size, bins, block) = (Self.size, Self.bins, Self.block)
        let range = { (partition: Int) in partition * bins..<(partition + 1) * bins }
        let zeros = [Double](repeating: 0, count: bins)
        var (real, imaginary) = Self.joined(
            (Array(background.real[range(first)]), Array(background.imaginary[range(first)])),
            second.map { (Array(background.real[range($0)]), Array(background.imaginary[range($0)])) } ?? (zeros, zeros))
        FFT.transform(&real, &imaginary, inverse: true)
        for index in 0..<size {
            real[index] = index < block ? real[index] / Double(size) : 0
            imaginary[index] = index < block ? imaginary[index] / Double(size) : 0
        }
        FFT.transform(&real, &imaginary, inverse: false)
        for bin in 0..<bins {
            let mirror = (size - bin) % size
            // The spectra of the real and the imaginary part.
            background.real[first * bins + bin] = (real[bin] + real[mirror]) / 2
            background.imaginary[first * bins + bin] = (imaginary[bin] - imaginary[mirror]) / 2
            if let second {
                background.real[second * bins + bin] = (imaginary[bin] + imaginary[mirror]) / 2
                background.imaginary[second * bins + bin] = (real[mirror] - real[bin]) / 2
            }
        }
    }

    /// The whole spectrum of a + i b, from the spectra of the real signals a and b (bins 0 ...
    /// size/2 each): bin k is A[k] + i B[k], bin size - k is conj(A[k]) + i conj(B[k]).
    private static func joined(_ a: (real: [Double], imaginary: [Double]), _ b: (real: [Double], imaginary: [Double])) -> (real: [Double], imaginary: [Double]) {
        var real = [Double](repeating: 0, count: size)
        var imaginary = [Double](repeating: 0, count: size)
        for bin in 0..<bins {
            real[bin] = a.real[bin] - b.imaginary[bin]
            imaginary[bin] = a.imaginary[bin] + b.real[bin]
            if bin > 0 && bin < size / 2 {
                real[size - bin] = a.real[bin] + b.imaginary[bin]
                imaginary[size - bin] = b.real[bin] - a.imaginary[bin]
            }
        }
        return (real, imaginary)
    }
}
