/// Time-scale modification of decoded speech, one frame at a time (pitch-synchronous overlap and
/// add, as WebRTC's NetEQ accelerates and stretches): a frame is made shorter by one or more
/// whole pitch periods, or longer by inserting one, with a cross-fade between two neighbouring
/// periods, so pitch and timbre stay and only the timing moves. A voiced frame changes only
/// when it is periodic enough for the seam to be inaudible; a quiet one (pause, breath, comfort
/// noise) always may. The first and last samples of the frame are kept, so it joins its
/// neighbours as before.
///
/// Pure: samples in, samples out; 48 kHz, mono or interleaved stereo (the period is found in both
/// channels together, and both are cut or lengthened alike).
public enum TimeStretcher {
    /// Pitch periods searched, in samples at 48 kHz: 2.5 ms (400 Hz) to 10 ms (100 Hz), so two
    /// periods fit into one 20 ms frame.
    static let shortestPeriod = 120
    static let longestPeriod = 480
    /// How alike two neighbouring periods must be (normalized correlation) for voiced speech.
    static let periodicity = 0.8
    /// Below this level (dBov) a frame is quiet: any stretch of it sounds the same.
    static let quietLevel = -46.0

    /// The frame made shorter by about a pitch period (removed as two periods cross-faded into
    /// one), or nil when it is voiced but not periodic enough to shorten cleanly.
    public static func accelerate(_ samples: [Int16], channels: Int = 1) -> [Int16]? {
        guard channels == 2 else { return period(of: samples).map { accelerate(samples, period: $0) } }
        return inStereo(samples) { accelerate($0, period: $1) }
    }

    private static func accelerate(_ samples: [Int16], period: Int) -> [Int16] {
        var output = [Int16]()
        output.reserveCapacity(samples.count - period)
        for index in 0..<period {
            let weight = Double(index) / Double(period)
            output.append(mix(samples[index], samples[period + index], weight))
        }
        output += samples[(2 * period)...]
        return output
    }

    /// The frame made longer by about a pitch period (a period that fades from the one after the
    /// seam into the one before it), or nil when it is voiced but not periodic enough.
    public static func stretch(_ samples: [Int16], channels: Int = 1) -> [Int16]? {
        guard channels == 2 else { return period(of: samples).map { stretch(samples, period: $0) } }
        return inStereo(samples) { stretch($0, period: $1) }
    }

    private static func stretch(_ samples: [Int16], period: Int) -> [Int16] {
        var output = [Int16]()
        output.reserveCapacity(samples.count + period)
        output += samples[..<period]
        for index in 0..<period {
            let weight = Double(index) / Double(period)
            output.append(mix(samples[period + index], samples[index], weight))
        }
        output += samples[period...]
        return output
    }

    /// Interleaved stereo `samples` with `edit` done to each channel at the period of both
    /// together, or nil when they have none.
    private static func inStereo(_ samples: [Int16], _ edit: ([Int16], Int) -> [Int16]) -> [Int16]? {
        let frames = samples.count / 2
        let left = (0..<frames).map { samples[2 * $0] }
        let right = (0..<frames).map { samples[2 * $0 + 1] }
        let both = (0..<frames).map { Int16((Int(left[$0]) + Int(right[$0])) / 2) }
        guard let period = period(of: both) else { return nil }
        let (newLeft, newRight) = (edit(left, period), edit(right, period))
        var output = [Int16]()
        output.reserveCapacity(2 * newLeft.count)
        for index in newLeft.indices { output += [newLeft[index], newRight[index]] }
        return output
    }

    /// `a` fading into `b` by `weight` (0 is all `a`).
    private static func mix(_ a: Int16, _ b: Int16, _ weight: Double) -> Int16 {
        Int16(clamping: Int((Double(a) * (1 - weight) + Double(b) * weight).rounded()))
    }

    /// The pitch period at the start of the frame, when its first two periods are alike enough
    /// to join (any period for a quiet frame, the longest that fits), or nil.
    static func period(of samples: [Int16]) -> Int? {
        guard samples.count >= 2 * longestPeriod else { return nil }
        if LevelMeter.dBov(samples) < quietLevel { return longestPeriod }
        let signal = samples.map(Double.init)
        // Coarse search at 12 kHz (the mean of every four samples), then the best lag near it
        // at the full rate.
        let decimated = stride(from: 0, to: 2 * longestPeriod, by: 4).map { start -> Double in
            signal[start..<(start + 4)].reduce(0, +) / 4
        }
        var coarse = shortestPeriod / 4
        var best = -Double.infinity
        for lag in (shortestPeriod / 4)...(longestPeriod / 4) {
            let score = correlation(decimated, lag: lag, length: lag)
            if score > best {
                best = score
                coarse = lag
            }
        }
        var period = 4 * coarse
        best = -Double.infinity
        for lag in max(shortestPeriod, 4 * coarse - 4)...min(longestPeriod, 4 * coarse + 4) {
            let score = correlation(signal, lag: lag, length: lag)
            if score > best {
                best = score
                period = lag
            }
        }
        return best >= periodicity ? period : nil
    }

    /// Normalized correlation of `signal[0..<length]` with `signal[lag..<lag + length]`.
    private static func correlation(_ signal: [Double], lag: Int, length: Int) -> Double {
        var product = 0.0
        var first = 0.0
        var second = 0.0
        for index in 0..<length {
            let a = signal[index]
            let b = signal[lag + index]
            product += a * b
            first += a * a
            second += b * b
        }
        let norm = (first * second).squareRoot()
        return norm > 0 ? product / norm : 0
    }
}
