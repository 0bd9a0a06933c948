import MajlisProtocol

/// A room's reverberation (the Schroeder-Moorer design Freeverb made common): eight damped
/// feedback combs in parallel, then four all-pass filters in series.
public struct Reverb: Sendable {
    private struct Comb {
        var buffer: [Float]
        var index = 0
        var store: Float = 0
        mutating func process(_ input: Float, feedback: Float, damping: Float) -> Float {
            let output = buffer[index]
            store = output * (1 - damping) + store * damping
            buffer[index] = input + store * feedback
            index = (index + 1) % buffer.count
            return output
        }
    }

    private struct AllPass {
        var buffer: [Float]
        var index = 0
        mutating func process(_ input: Float) -> Float {
            let delayed = buffer[index]
            buffer[index] = input + delayed * Reverb.allPassFeedback
            index = (index + 1) % buffer.count
            return delayed - input
        }
    }

    // Delay lengths (samples at 44.1 kHz) that share no common factor, so the echoes do not line
    // up into a ringing tone; scaled to the sample rate.
    public static let combLengths = [1116, 1188, 1277, 1356, 1422, 1491, 1557, 1617]
    public static let allPassLengths = [556, 441, 341, 225]
    /// A comb's feedback is `feedback.base + feedback.perRoomSize * roomSize`; its damping
    /// `dampingScale * damping`.
    public static let feedback = (base: 0.7, perRoomSize: 0.28)
    public static let dampingScale = 0.4
    public static let allPassFeedback: Float = 0.5
    /// The combs ring up what enters many times over: it goes in scaled down, and the tail
    /// comes out scaled up again to sit beside the dry voice (Freeverb's gains).
    public static let inputGain = 0.03
    public static let outputGain = 3.0

    public private(set) var settings: ReverbSettings
    private var combs: [Comb]
    private var allPasses: [AllPass]

    public init(_ settings: ReverbSettings = ReverbSettings(), sampleRate: Int = AudioFormat.sampleRate) {
        self.settings = settings
        let scale = Double(sampleRate) / 44_100
        combs = Self.combLengths.map { Comb(buffer: Array(repeating: 0, count: Int(Double($0) * scale))) }
        allPasses = Self.allPassLengths.map { AllPass(buffer: Array(repeating: 0, count: Int(Double($0) * scale))) }
    }

    /// New settings; the tail already in the room rings on.
    public mutating func set(_ settings: ReverbSettings) { self.settings = settings }

    /// `samples` through the room, in place.
    public mutating func process(_ samples: inout [Float]) {
        let feedback = Float(Self.feedback.base + Self.feedback.perRoomSize * settings.roomSize)
        let damping = Float(Self.dampingScale * settings.damping)
        let wet = Float(settings.wet * Self.outputGain)
        let dry = 1 - Float(settings.wet) / 2
        let input = Float(Self.inputGain)
        for index in samples.indices {
            let x = samples[index]
            var sum: Float = 0
            for comb in combs.indices { sum += combs[comb].process(x * input, feedback: feedback, damping: damping) }
            for allPass in allPasses.indices { sum = allPasses[allPass].process(sum) }
            samples[index] = x * dry + sum * wet
        }
    }
}
