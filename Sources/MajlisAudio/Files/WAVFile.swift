import Foundation

/// Reads and writes RIFF/WAVE files: PCM 8, 16, 24 and 32-bit and IEEE float 32-bit, any rate
/// and channel count (also WAVE_FORMAT_EXTENSIBLE).
public enum WAVFile {
    /// Reads a whole file.
    public static func read(_ path: String) throws(AudioError) -> PCMBuffer {
        guard let data = FileManager.default.contents(atPath: path) else { throw AudioError.badFile("cannot read \(path)") }
        return try parse(Array(data), name: path)
    }

    static func parse(_ bytes: [UInt8], name: String) throws(AudioError) -> PCMBuffer {
        func u32(_ at: Int) -> UInt32 { UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24 }
        func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
        func tag(_ at: Int) -> String { String(decoding: bytes[at..<at + 4], as: UTF8.self) }
        guard bytes.count >= 12, tag(0) == "RIFF", tag(8) == "WAVE" else { throw AudioError.badFile("\(name) is not a WAV file") }
        var offset = 12
        var format: (code: UInt16, channels: Int, rate: Int, bits: Int)?
        while offset + 8 <= bytes.count {
            let id = tag(offset)
            let size = Int(u32(offset + 4))
            let body = offset + 8
            guard size >= 0, body + size <= bytes.count || id == "data" else { throw AudioError.badFile("\(name): chunk \(id) runs past the end") }
            if id == "fmt " {
                guard size >= 16 else { throw AudioError.badFile("\(name): short fmt chunk") }
                var code = u16(body)
                if code == 0xFFFE && size >= 26 { code = u16(body + 24) }  // extensible: the sub-format's first two bytes
                format = (code, Int(u16(body + 2)), Int(u32(body + 4)), Int(u16(body + 14)))
            } else if id == "data" {
                guard let format else { throw AudioError.badFile("\(name): data before fmt") }
                let end = min(bytes.count, body + size)
                return try decode(Array(bytes[body..<end]), format: format, name: name)
            }
            offset = body + size + (size & 1)
        }
        throw AudioError.badFile("\(name) has no audio data")
    }

    static func decode(_ data: [UInt8], format: (code: UInt16, channels: Int, rate: Int, bits: Int), name: String) throws(AudioError) -> PCMBuffer {
        guard format.channels > 0, format.channels <= 16, format.rate > 0, format.rate <= 384_000 else {
            throw AudioError.badFile("\(name): \(format.channels) channels at \(format.rate) Hz is not supported")
        }
        let width = format.bits / 8
        var samples: [Float] = []
        samples.reserveCapacity(data.count / max(1, width))
        switch (format.code, format.bits) {
        case (1, 8):
            for byte in data { samples.append((Float(byte) - 128) / 128) }
        case (1, 16):
            var index = 0
            while index + 1 < data.count {
                samples.append(Float(Int16(bitPattern: UInt16(data[index]) | UInt16(data[index + 1]) << 8)) / 32768)
                index += 2
            }
        case (1, 24):
            var index = 0
            while index + 2 < data.count {
                let value = Int32(bitPattern: UInt32(data[index]) << 8 | UInt32(data[index + 1]) << 16 | UInt32(data[index + 2]) << 24) >> 8
                samples.append(Float(value) / 8_388_608)
                index += 3
            }
        case (1, 32):
            var index = 0
            while index + 3 < data.count {
                let value = Int32(bitPattern: UInt32(data[index]) | UInt32(data[index + 1]) << 8 | UInt32(data[index + 2]) << 16 | UInt32(data[index + 3]) << 24)
                samples.append(Float(value) / 2_147_483_648)
                index += 4
            }
        case (3, 32):
            var index = 0
            while index + 3 < data.count {
                let bits = UInt32(data[index]) | UInt32(data[index + 1]) << 8 | UInt32(data[index + 2]) << 16 | UInt32(data[index + 3]) << 24
                samples.append(max(-1, min(1, Float(bitPattern: bits))))
                index += 4
            }
        default:
            throw AudioError.badFile("\(name): format \(format.code) with \(format.bits)-bit samples is not supported")
        }
        let whole = samples.count - samples.count % format.channels
        return PCMBuffer(sampleRate: format.rate, channels: format.channels, samples: Array(samples.prefix(whole)))
    }

    /// Writes 16-bit PCM.
    public static func write(_ buffer: PCMBuffer, to path: String) throws(AudioError) {
        let pcm = buffer.int16
        var bytes: [UInt8] = []
        bytes.reserveCapacity(44 + pcm.count * 2)
        func put32(_ value: UInt32) { bytes += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)] }
        func put16(_ value: UInt16) { bytes += [UInt8(value & 0xFF), UInt8(value >> 8)] }
        let dataSize = UInt32(pcm.count * 2)
        bytes += Array("RIFF".utf8)
        put32(36 + dataSize)
        bytes += Array("WAVEfmt ".utf8)
        put32(16)
        put16(1)
        put16(UInt16(buffer.channels))
        put32(UInt32(buffer.sampleRate))
        put32(UInt32(buffer.sampleRate * buffer.channels * 2))
        put16(UInt16(buffer.channels * 2))
        put16(16)
        bytes += Array("data".utf8)
        put32(dataSize)
        for sample in pcm { put16(UInt16(bitPattern: sample)) }
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { throw AudioError.badFile("cannot write \(path)") }
    }
}
