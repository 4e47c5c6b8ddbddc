import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { describe, expect, inject, it } from 'vitest';
import { searchAttributes } from '../../src/temporal/contracts/search-attributes.js';

describe('runs you can find in the Temporal UI', () => {
  it('the embedded dev server registers every caseflow search attribute as a keyword', async () => {
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    try {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
      for (const key of Object.values(searchAttributes)) {
        expect(customAttributes?.[key.name], key.name).toBe(
          temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
        );
      }
    } finally {
      await connection.close();
    }
  });
});
