import Foundation

/// The discrete Fourier transform of a power-of-two count of complex samples, in place
/// (radix 2; the inverse unscaled): the noise suppressor's spectra, convolution in the lab.
public enum FFT {
    public static func transform(_ real: inout [Double], _ imaginary: inout [Double], inverse: Bool) {
        let count = real.count
        precondition(count > 0 && count & (count - 1) == 0 && imaginary.count == count, "FFT: a power of two of complex samples")
        real.withUnsafeMutableBufferPointer { re in
            imaginary.withUnsafeMutableBufferPointer { im in
                var j = 0
                for i in 1..<count {
                    var bit = count >> 1
                    while j & bit != 0 {
                        j ^= bit
                        bit >>= 1
                    }
                    j |= bit
                    if i < j {
                        re.swapAt(i, j)
                        im.swapAt(i, j)
                    }
                }
                var length = 2
                while length <= count {
                    let angle = (inverse ? 2 : -2) * Double.pi / Double(length)
                    let (stepReal, stepImaginary) = (cos(angle), sin(angle))
                    var start = 0
                    while start < count {
                        var (wReal, wImaginary) = (1.0, 0.0)
                        for k in 0..<length / 2 {
                            let (p, q) = (start + k, start + k + length / 2)
                            let tReal = re[q] * wReal - im[q] * wImaginary
                            let tImaginary = re[q] * wImaginary + im[q] * wReal
                            re[q] = re[p] - tReal
                            im[q] = im[p] - tImaginary
                            re[p] += tReal
                            im[p] += tImaginary
                            (wReal, wImaginary) = (wReal * stepReal - wImaginary * stepImaginary, wReal * stepImaginary + wImaginary * stepReal)
                        }
                        start += length
                    }
                    length *= 2
                }
            }
        }
    }
}
