/* DecodeAndCropJpeg's decoder (common/ops/image_jpeg_crop_ops.py): libjpeg-turbo driven
   as TensorFlow's jpeg::Uncompress drives it for a crop window. The window's columns are
   decoded with jpeg_crop_scanline (which widens them leftwards to an iMCU boundary and
   upsamples chroma within that region only) and its first row reached with
   jpeg_skip_scanlines, so edge pixels come out as TensorFlow's do. Errors longjmp back
   here; nothing is printed. Reentrant: all state is on the stack. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

struct flowrt_error {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
};

static void flowrt_error_exit(j_common_ptr cinfo) {
    struct flowrt_error *err = (struct flowrt_error *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, err->message);
    longjmp(err->jump, 1);
}

static void flowrt_silent(j_common_ptr cinfo, int level) {
    (void)cinfo;
    (void)level;
}

/* Decode rows crop_y.. and columns crop_x.. (crop_h x crop_w) of `data` into `out`
   (crop_h * crop_w * components bytes). components: 1 (gray) or 3 (RGB). Returns 0;
   -1 with `message` on a libjpeg error; -2 if the window is not inside the image, whose
   scaled size is then in dims[0], dims[1]. */
int flowrt_jpeg_decode_crop(const unsigned char *data, unsigned long size, int components,
                            int ratio, int fancy, int fast_dct, int crop_x, int crop_y,
                            int crop_w, int crop_h, unsigned char *out, char *message,
                            int *dims) {
    struct jpeg_decompress_struct cinfo;
    struct flowrt_error err;
    JSAMPLE *volatile row = NULL;
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = flowrt_error_exit;
    err.pub.emit_message = flowrt_silent;
    if (setjmp(err.jump)) {
        strncpy(message, err.message, JMSG_LENGTH_MAX - 1);
        message[JMSG_LENGTH_MAX - 1] = 0;
        free(row);
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, size);
    jpeg_read_header(&cinfo, TRUE);
    cinfo.out_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    cinfo.do_fancy_upsampling = fancy ? TRUE : FALSE;
    cinfo.scale_num = 1;
    cinfo.scale_denom = (unsigned int)ratio;
    cinfo.dct_method = fast_dct ? JDCT_IFAST : JDCT_ISLOW;
    jpeg_start_decompress(&cinfo);
    dims[0] = (int)cinfo.output_height;
    dims[1] = (int)cinfo.output_width;
    if (crop_x < 0 || crop_y < 0 || crop_w <= 0 || crop_h <= 0 ||
        (long)crop_x + crop_w > (long)cinfo.output_width ||
        (long)crop_y + crop_h > (long)cinfo.output_height) {
        jpeg_destroy_decompress(&cinfo);
        return -2;
    }
    JDIMENSION x = (JDIMENSION)crop_x, width = (JDIMENSION)crop_w;
    jpeg_crop_scanline(&cinfo, &x, &width);
    if (crop_y > 0) jpeg_skip_scanlines(&cinfo, (JDIMENSION)crop_y);
    size_t stride = (size_t)cinfo.output_width * (size_t)cinfo.output_components;
    row = (JSAMPLE *)malloc(stride);
    if (row == NULL) {
        strcpy(message, "out of memory");
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    size_t offset = (size_t)(crop_x - (int)x) * (size_t)components;
    size_t line = (size_t)crop_w * (size_t)components;
    for (int i = 0; i < crop_h; i++) {
        JSAMPROW rows[1] = {row};
        jpeg_read_scanlines(&cinfo, rows, 1);
        memcpy(out + (size_t)i * line, row + offset, line);
    }
    free(row);
    jpeg_abort_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return 0;
}
