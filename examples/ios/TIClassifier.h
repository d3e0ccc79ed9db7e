/* TIClassifier: an image classifier on tinyinfer for iOS apps, in Objective-C (ARC). The
 * model is a file of the app bundle (.tflite or .onnx); frames come as camera
 * CVPixelBuffers (32BGRA or 32RGBA) or UIImages. It runs on the CPU: iOS has no OpenCL
 * (TIClassifier.m builds tinyinfer with TI_NO_OPENCL). One TIClassifier is one tinyinfer
 * session: calls on it are serialized (@synchronized); make one per thread for parallel
 * work. See README.md. */
#import <Foundation/Foundation.h>
#import <CoreVideo/CoreVideo.h>

@class UIImage;

NS_ASSUME_NONNULL_BEGIN

extern NSString *const TIClassifierErrorDomain; /* code: a ti_status value */

/* One class of the result: its index in the model's output, its score, its label. */
@interface TIClassification : NSObject
@property(nonatomic, readonly) NSInteger index;
@property(nonatomic, readonly) double score;
@property(nonatomic, readonly, copy, nullable) NSString *label;
@end

@interface TIClassifier : NSObject

/* Loads <name>.<ext> from the main bundle, and labels from <labelsName>.txt (one a line;
 * nil: none). threads: 0 for tinyinfer's choice. Returns nil with *error on failure. */
- (nullable instancetype)initWithModelNamed:(NSString *)name
                                     ofType:(NSString *)ext
                                labelsNamed:(nullable NSString *)labelsName
                                    threads:(NSInteger)threads
                                      error:(NSError **)error;

/* The same from the model's bytes. */
- (nullable instancetype)initWithModelData:(NSData *)model
                                    labels:(nullable NSArray<NSString *> *)labels
                                   threads:(NSInteger)threads
                                     error:(NSError **)error;

/* The k best classes of a camera frame, best first (kCVPixelFormatType_32BGRA, the camera's
 * usual format, or 32RGBA). */
- (nullable NSArray<TIClassification *> *)classifyPixelBuffer:(CVPixelBufferRef)buffer
                                                          top:(NSInteger)k
                                                        error:(NSError **)error;

/* The same for a UIImage (drawn into an RGBA bitmap first). */
- (nullable NSArray<TIClassification *> *)classifyImage:(UIImage *)image
                                                    top:(NSInteger)k
                                                  error:(NSError **)error;
@end

NS_ASSUME_NONNULL_END
