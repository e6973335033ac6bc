import CImageCodecs
import Foundation
import ShelfCore

/// Why a picture could not be decoded or encoded.
public enum ImageError: ClassifiedError, Equatable {
    /// A picture that cannot be decoded is bad input; a failed allocation or encoding is Shelf's.
    public var kind: ErrorKind {
        switch self {
        case .unknownFormat, .corrupt, .tooLarge: .invalid
        case .outOfMemory, .encodeFailed: .internal
        }
    }

    /// "invalidImage", "imageTooLarge" or "imageFailed".
    public var errorCode: String {
        switch self {
        case .unknownFormat, .corrupt: "invalidImage"
        case .tooLarge: "imageTooLarge"
        case .outOfMemory, .encodeFailed: "imageFailed"
        }
    }

    /// The bytes are neither JPEG, PNG nor WebP.
    case unknownFormat
    /// The data is damaged or truncated; the reason comes from the codec.
    case corrupt(String)
    /// The header declares dimensions beyond the limits: refused before any pixel allocation.
    case tooLarge(width: Int, height: Int, limits: ImageLimits)
    /// The pixel buffer could not be allocated.
    case outOfMemory
    /// Encoding a thumbnail failed.
    case encodeFailed(String)

    public var description: String {
        switch self {
        case .unknownFormat: "not a JPEG, PNG or WebP image"
        case .corrupt(let reason): "corrupt image: \(reason)"
        case .tooLarge(let width, let height, let limits):
            "image of \(width)×\(height) pixels is beyond the limit (\(limits.maxSide) a side, \(limits.maxPixels) pixels)"
        case .outOfMemory: "out of memory for the decoded image"
        case .encodeFailed(let reason): "cannot encode the image: \(reason)"
        }
    }
}

/// The largest image Shelf decodes: anything bigger is refused from its header.
public struct ImageLimits: Sendable, Equatable, Hashable {
    public var maxSide: Int
    public var maxPixels: Int

    /// 16,384 pixels a side and 64 megapixels unless said otherwise.
    public init(maxSide: Int = 16_384, maxPixels: Int = 64 << 20) {
        self.maxSide = maxSide
        self.maxPixels = maxPixels
    }
}

/// JPEG, PNG and WebP decoding to a size (libjpeg-turbo with DCT scaling, libpng, libwebp), a
/// good-quality downscale, and thumbnail encoding (JPEG or PNG); all of it in C through
/// `CImageCodecs`, errors typed.
public enum ImageCodec {
    /// The MIME type the first bytes name (`image/jpeg`, `image/png`, `image/webp`), JPEG when
    /// they name none: what a tag writer declares for a picture it embeds.
    public static func mimeType(of data: Data) -> String {
        let format = data.withUnsafeBytes { shelf_image_format($0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
        switch Int(format) {
        case Int(SHELF_FORMAT_PNG): return "image/png"
        case Int(SHELF_FORMAT_WEBP): return "image/webp"
        default: return "image/jpeg"
        }
    }

    /// The formats a thumbnail can be written in.
    public enum Format: Sendable, Equatable {
        case png
        case jpeg(quality: Int)
    }

    /// The dimensions a file declares, read from its header alone.
    public static func dimensions(of data: Data) throws(ImageError) -> (width: Int, height: Int) {
        var result = shelf_image()
        data.withUnsafeBytes { buffer in
            shelf_image_probe(buffer.bindMemory(to: UInt8.self).baseAddress, buffer.count, &result)
        }
        try check(result, limits: nil)
        return (Int(result.source_width), Int(result.source_height))
    }

    /// Decodes a picture to fit inside `maxPixelSize` × `maxPixelSize` (aspect kept, never
    /// enlarged): JPEG at the smallest DCT scale still at least that large, then area-averaged down.
    /// `dctScaling: false` decodes a JPEG whole before scaling (what the benchmark compares with).
    /// The pixels are decoded straight into the returned image's memory when no scaling follows.
    public static func decode(
        _ data: Data, maxPixelSize: Int, limits: ImageLimits = ImageLimits(), dctScaling: Bool = true
    ) throws(ImageError) -> DecodedImage {
        let target = UInt32(clamping: max(1, maxPixelSize))
        let cLimits = shelf_image_limits(max_side: UInt32(clamping: limits.maxSide), max_pixels: UInt64(clamping: limits.maxPixels))
        let outcome: Result<DecodedImage, ImageError> = data.withUnsafeBytes { raw in
            var info = shelf_image()
            var decoder: OpaquePointer?
            shelf_decoder_open(raw.bindMemory(to: UInt8.self).baseAddress, raw.count, dctScaling ? target : UInt32.max, cLimits, &decoder, &info)
            do throws(ImageError) { try check(info, limits: limits) } catch { return .failure(error) }
            guard let decoder else { return .failure(.outOfMemory) }
            let width = Int(info.width)
            let height = Int(info.height)
            let (fitWidth, fitHeight) = fit(width: width, height: height, into: Int(target))
            let direct = fitWidth == width && fitHeight == height
            // The whole decode goes into the result when it is the result, else into a scratch
            // buffer that the downscale reads.
            var decoded = [UInt8](unsafeUninitializedCapacity: width * height * 4) { buffer, count in
                shelf_decoder_finish(decoder, buffer.baseAddress, &info)
                count = info.status == SHELF_IMAGE_OK ? width * height * 4 : 0
            }
            do throws(ImageError) { try check(info, limits: limits) } catch { return .failure(error) }
            if direct { return .success(DecodedImage(width: width, height: height, bytesPerRow: width * 4, pixels: decoded)) }
            var status: Int32 = 0
            let scaled = [UInt8](unsafeUninitializedCapacity: fitWidth * fitHeight * 4) { buffer, count in
                status = shelf_image_downscale(decoded, UInt32(width), UInt32(height), buffer.baseAddress, UInt32(fitWidth), UInt32(fitHeight))
                count = status == SHELF_IMAGE_OK ? fitWidth * fitHeight * 4 : 0
            }
            decoded = []
            guard status == SHELF_IMAGE_OK else { return .failure(.outOfMemory) }
            return .success(DecodedImage(width: fitWidth, height: fitHeight, bytesPerRow: fitWidth * 4, pixels: scaled))
        }
        return try outcome.get()
    }

    /// The size that fits inside a square of `side` keeping the aspect ratio, never larger.
    static func fit(width: Int, height: Int, into side: Int) -> (Int, Int) {
        let longer = max(width, height)
        guard longer > side else { return (width, height) }
        let scale = Double(side) / Double(longer)
        return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }

    /// Encodes an image as PNG or JPEG.
    public static func encode(_ image: DecodedImage, as format: Format) throws(ImageError) -> Data {
        precondition(image.bytesPerRow == image.width * 4, "encoding expects tightly packed rows")
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = [CChar](repeating: 0, count: 160)
        let status: Int32 = image.pixels.withUnsafeBufferPointer { pixels in
            switch format {
            case .png:
                shelf_image_encode(
                    pixels.baseAddress, UInt32(image.width), UInt32(image.height), Int32(SHELF_FORMAT_PNG), 0,
                    &output, &size, &message, message.count)
            case .jpeg(let quality):
                shelf_image_encode(
                    pixels.baseAddress, UInt32(image.width), UInt32(image.height), Int32(SHELF_FORMAT_JPEG), Int32(quality),
                    &output, &size, &message, message.count)
            }
        }
        guard status == SHELF_IMAGE_OK, let output else {
            if status == SHELF_IMAGE_NO_MEMORY { throw .outOfMemory }
            throw .encodeFailed(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        defer { shelf_image_free(output) }
        return Data(bytes: output, count: size)
    }

    private static func check(_ result: shelf_image, limits: ImageLimits?) throws(ImageError) {
        var message = result.message
        let text = withUnsafeBytes(of: &message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        switch Int(result.status) {
        case Int(SHELF_IMAGE_OK): return
        case Int(SHELF_IMAGE_UNKNOWN_FORMAT): throw .unknownFormat
        case Int(SHELF_IMAGE_TOO_LARGE):
            throw .tooLarge(width: Int(result.source_width), height: Int(result.source_height), limits: limits ?? ImageLimits())
        case Int(SHELF_IMAGE_NO_MEMORY): throw .outOfMemory
        default: throw .corrupt(text.isEmpty ? "unreadable data" : text)
        }
    }
}
