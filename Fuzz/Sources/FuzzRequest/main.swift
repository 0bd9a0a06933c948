import Foundation
import FuzzDriver
import MajlisProtocol

/// Any bytes as a signaling frame: decoded strictly (a request or a clear error, never a crash),
/// and the id scan used for frames refused before decoding.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzRequest(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let frame = Data(bytes: bytes, count: count)
    switch RequestDecoder.decode(frame) {
    case .request(let request): precondition(!request.op.isEmpty)
    case .invalid(_, let error): precondition(!error.message.isEmpty)
    }
    _ = RequestDecoder.peekId(frame)
    _ = DisplayName.clean(String(decoding: frame, as: UTF8.self))
    return 0
}


runFuzzer(fuzzRequest)
