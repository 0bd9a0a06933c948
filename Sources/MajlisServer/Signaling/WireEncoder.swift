import Foundation
import MajlisProtocol

/// Encodes what the server sends. Each event is encoded once and the same bytes go to every
/// recipient. Values are written out as they are encoded (`StreamingJSONEncoder`); one that
/// cannot be streamed goes through `JSONEncoder`.
enum WireEncoder {
    static func encode(_ value: some Encodable) -> Data {
        if let streamed = try? StreamingJSONEncoder.encode(value) { return streamed }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        do {
            return try encoder.encode(value)
        } catch {
            return Data(#"{"code":"internal","message":"encoding failed"}"#.utf8)
        }
    }

    /// With keys sorted: for bodies others sign or compare.
    static func encodeSorted(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return (try? encoder.encode(value)) ?? Data(#"{"code":"internal","message":"encoding failed"}"#.utf8)
    }

    /// `{"re": re, "ok": ok, "data"|"error": body}` around an already encoded body.
    static func response(re: Int64?, ok: Bool, body: Data) -> Data {
        var frame = Data(#"{"re":"#.utf8)
        frame.append(contentsOf: Array((re.map(String.init) ?? "null").utf8))
        frame.append(contentsOf: Array((ok ? #","ok":true,"data":"# : #","ok":false,"error":"#).utf8))
        frame.append(body)
        frame.append(UInt8(ascii: "}"))
        return frame
    }

    static func success(re: Int64, data: some Encodable) -> Data {
        response(re: re, ok: true, body: encode(data))
    }

    static func failure(re: Int64?, _ error: ProtocolError) -> Data {
        response(re: re, ok: false, body: encode(error))
    }

    static func event(_ frame: EventFrame) -> Data { encode(frame) }
}
