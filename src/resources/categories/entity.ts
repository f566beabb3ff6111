import { defineEntity, p } from '@mikro-orm/core';

export const CategorySchema = defineEntity({
  name: 'Category',
  tableName: 'categories',
  schema: '*',
  properties: {
    uuid: p.uuid().primary(),
    name: p.text(),
    alias: p.text().unique(),
    createdAt: p.datetime().onCreate(() => new Date()),
    modifiedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export class Category extends CategorySchema.class {}
CategorySchema.setClass(Category);
