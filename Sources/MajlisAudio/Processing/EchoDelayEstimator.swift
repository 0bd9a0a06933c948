import Foundation

/// How long after a frame is handed to the speaker its echo reaches the microphone: the playout
/// buffer, the sound server's and the device's buffers, and the air, which together are known to
/// nobody. Found by lining up the loudness of what was played with the loudness of what was
/// heard, 10 ms blocks over the last three seconds, at every delay from 20 to 600 ms: where the
/// correlation first comes near its highest, once that is clearly high (a far end that speaks, an
/// echo that is heard) and found again on the next searches. Until then, the delay it was told
/// (`guess`).
public struct EchoDelayEstimator: Sendable {
    static let block = AudioFormat.sampleRate / 100
    /// Delays searched, in blocks (20-600 ms), over a window of 300 blocks (3 s), or of what
    /// there is from the first 0.6 s on.
    static let lags = 2...60
    static let window = 300
    static let shortest = 60
    /// Searched every 25 blocks (250 ms); every 10 (100 ms) until a first delay is found: the
    /// filter learns nothing that lasts before, and a first delay at 2 s left it 24 dB of ERLE
    /// 5 s in, against 36 dB with one at 1.3 s.
    static let every = 25
    static let firstEvery = 10
    /// A correlation this high is an echo (measured: 0.8-0.95 for speech through a room's echo
    /// 6 dB down at 10 dB SNR; under 0.3 where the far end is silent or the echo path is cut).
    static let confident = 0.5
    /// How far above the median of all delays the highest must be: an echo has one delay, a
    /// voice at the near end that happens to follow the far end's rhythm has none.
    static let standsOut = 0.2
    /// The echo's beginning: the correlation `onset` blocks before it is `rise` under the highest.
    static let onset = 2
    static let rise = 0.15
    /// Another delay needs this share of the last one's strength, which fades by `forgetting` a
    /// search (halved in about 8 s without being found again: the room changed).
    static let clearAsBefore = 0.85
    static let forgetting = 0.98
    /// How far under the highest correlation the echo's beginning may be.
    static let nearBest = 0.05

    /// The delay in force, ms.
    public private(set) var delay: Int
    /// Whether `delay` was measured (false: still the guess).
    public private(set) var measured = false
    /// Log energies of 10 ms blocks, by block number (the far end's, played; the microphone's, nil
    /// where it was not heard).
    private var far: [Double] = []
    private var near: [Double?] = []
    private var sinceSearch = 0
    private var candidate: Int?
    private var agreeing = 0
    /// How clear the echo at the delay in force was (its correlation, slowly forgotten).
    private var strength = 0.0

    public init(guess: Int) {
        delay = guess
    }

    /// A frame handed to the speaker.
    public mutating func played(_ frame: [Int16]) {
        far += Self.energies(frame)
        // Every frame played is a moment passed: the microphone's blocks not heard stay nil.
        while near.count < far.count - frame.count / Self.block { near.append(nil) }
        trim()
    }

    /// A frame of the microphone, heard before the frame played in the same moment.
    public mutating func heard(_ frame: [Int16]) {
        while near.count < far.count { near.append(nil) }
        near += Self.energies(frame).map(Optional.some)
        sinceSearch += frame.count / Self.block
        if sinceSearch >= (measured ? Self.every : Self.firstEvery) {
            sinceSearch = 0
            search()
        }
    }

    private mutating func trim() {
        let keep = Self.window + Self.lags.upperBound + 10
        if far.count > keep * 2 {
            let drop = far.count - keep
            far.removeFirst(drop)
            near.removeFirst(min(drop, near.count))
        }
    }

    private mutating func search() {
        let end = near.count
        let window = min(Self.window, end - Self.lags.lowerBound)
        guard window >= Self.shortest else { return }
        var correlations: [(lag: Int, correlation: Double)] = []
        for lag in Self.lags {
            var pairs: [(Double, Double)] = []
            pairs.reserveCapacity(window)
            for index in (end - window)..<end {
                let source = index - lag
                guard let heard = near[index], source >= 0, source < far.count else { continue }
                pairs.append((far[source], heard))
            }
            guard pairs.count > window / 2 else { continue }
            correlations.append((lag, Self.correlation(pairs)))
        }
        let sorted = correlations.map(\.correlation).sorted()
        guard let best = sorted.last, best >= Self.confident, best - sorted[sorted.count / 2] >= Self.standsOut else {
            candidate = nil
            agreeing = 0
            strength *= Self.forgetting
            return
        }
        // A room's echo goes on after its first sound, and so does the correlation: the first
        // delay near the highest is where the echo begins.
        guard let firstIndex = correlations.firstIndex(where: { $0.correlation >= best - Self.nearBest }) else { return }
        let first = correlations[firstIndex].lag
        // And it begins there: 20 ms sooner the correlation was clearly lower (a blurred curve,
        // high from the shortest delay on, is no measurement).
        guard firstIndex >= Self.onset, correlations[firstIndex - Self.onset].correlation <= best - Self.rise else {
            candidate = nil
            agreeing = 0
            return
        }
        if measured && abs(first * 10 - delay) <= 10 {
            // The delay in force, found again.
            strength = max(strength * Self.forgetting, best)
            agreeing = 0
            return
        }
        // A first delay is taken when two searches in a row agree; another, when three do and
        // its echo is about as clear as the one it replaces was (in double talk the near end's
        // voice blurs the correlation, and a delay taken then cost the near end 1 PESQ-WB).
        agreeing = candidate.map { abs($0 - first) <= 1 } == true ? agreeing + 1 : 1
        candidate = first
        let needed = measured ? 3 : 2
        guard agreeing >= needed, !measured || best >= Self.clearAsBefore * strength else { return }
        delay = first * 10
        measured = true
        strength = best
        agreeing = 0
    }

    /// Pearson's correlation of the pairs.
    static func correlation(_ pairs: [(Double, Double)]) -> Double {
        let count = Double(pairs.count)
        let meanA = pairs.reduce(0) { $0 + $1.0 } / count
        let meanB = pairs.reduce(0) { $0 + $1.1 } / count
        var ab = 0.0, aa = 0.0, bb = 0.0
        for (a, b) in pairs {
            ab += (a - meanA) * (b - meanB)
            aa += (a - meanA) * (a - meanA)
            bb += (b - meanB) * (b - meanB)
        }
        guard aa > 0, bb > 0 else { return 0 }
        return ab / (aa * bb).squareRoot()
    }

    /// Each 10 ms block's energy, dB (silence: -100).
    static func energies(_ frame: [Int16]) -> [Double] {
        stride(from: 0, to: frame.count - block + 1, by: block).map { start in
            var sum = 0.0
            for index in start..<start + block { sum += Double(frame[index]) * Double(frame[index]) }
            return 10 * log10(sum / Double(block) + 1e-10)
        }
    }
}
