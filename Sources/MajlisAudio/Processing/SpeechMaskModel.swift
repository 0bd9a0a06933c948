import Foundation

/// The speech mask's network: fully connected layers, tanh between them and a logistic output
/// (0...1). Its weights are those `scripts/train-speech-mask.py` wrote into `SpeechMaskWeights`:
/// little-endian, each layer's kind (0: tanh, 1: logistic), inputs and outputs as three UInt32,
/// then its weights input by input, then its biases, as half-precision floats (the network does
/// not need more, and the SDK carries half the bytes).
struct SpeechMaskModel: Sendable {
    struct Layer: Sendable {
        let logistic: Bool
        let inputs: Int
        let outputs: Int
        /// `inputs` rows of `outputs`.
        let weights: [Float]
        let biases: [Float]
    }

    let layers: [Layer]

    static let shared = SpeechMaskModel(base64: SpeechMaskWeights.base64)

    init(base64: String) {
        guard let data = Data(base64Encoded: base64, options: .ignoreUnknownCharacters) else { preconditionFailure("SpeechMaskWeights: not base64") }
        let bytes = [UInt8](data)
        var position = 0
        func word() -> Int {
            defer { position += 4 }
            return (0..<4).reduce(0) { $0 | Int(bytes[position + $1]) << (8 * $1) }
        }
        func halves(_ count: Int) -> [Float] {
            defer { position += 2 * count }
            return (0..<count).map { Self.float(half: UInt16(bytes[position + 2 * $0]) | UInt16(bytes[position + 2 * $0 + 1]) << 8) }
        }
        var layers: [Layer] = []
        while position < bytes.count {
            let (kind, inputs, outputs) = (word(), word(), word())
            layers.append(Layer(logistic: kind == 1, inputs: inputs, outputs: outputs, weights: halves(inputs * outputs), biases: halves(outputs)))
        }
        self.layers = layers
    }

    /// An IEEE 754 half-precision number's value (Float16 itself is not on every platform the SDK
    /// builds for).
    static func float(half: UInt16) -> Float {
        let sign: Float = half & 0x8000 == 0 ? 1 : -1
        let exponent = Int(half >> 10 & 0x1F)
        let fraction = Float(half & 0x3FF)
        switch exponent {
        case 0: return sign * fraction * pow(2, -24)
        case 31: return fraction == 0 ? sign * .infinity : .nan
        default: return sign * (1 + fraction / 1_024) * pow(2, Float(exponent - 15))
        }
    }

    /// The outputs for `input` (as many as the first layer takes).
    func run(_ input: [Float]) -> [Float] {
        var values = input
        for layer in layers {
            var output = layer.biases
            values.withUnsafeBufferPointer { x in
                layer.weights.withUnsafeBufferPointer { w in
                    output.withUnsafeMutableBufferPointer { y in
                        for row in 0..<layer.inputs {
                            let value = x[row]
                            let start = row * layer.outputs
                            for column in 0..<layer.outputs { y[column] += value * w[start + column] }
                        }
                    }
                }
            }
            values = output.map { layer.logistic ? 1 / (1 + exp(-$0)) : tanh($0) }
        }
        return values
    }
}
