// Offer images (spec 2.3 `media`, spec 8 limits): each image at most 3000 x 3000 pixels.
export const MAX_IMAGE_PIXELS = 3000;

/** Whether an image of this size may be an offer's image. */
export function imageFits(width: number, height: number, max = MAX_IMAGE_PIXELS): boolean {
  return width > 0 && height > 0 && width <= max && height <= max;
}
