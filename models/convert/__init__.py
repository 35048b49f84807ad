"""Karpenter's older APIs as v1 manifests: what ``joinery convert`` does, with no I/O.

Three older shapes are read: ``karpenter.sh/v1alpha5`` Provisioners,
``karpenter.k8s.aws/v1alpha1`` AWSNodeTemplates and the ``v1beta1`` NodePools and
EC2NodeClasses. An alpha object is first mapped to its beta form as Karpenter's own
``karpenter-convert`` tool and v1beta1 migration guide did, then every beta object to v1 as
the v1 migration guide says, so each step follows one documented mapping. Whatever has no v1
equivalent is dropped with one note naming the object and the field.
"""

from models.convert.common import Conversion, ConversionError
from models.convert.documents import convert_documents

__all__ = ["Conversion", "ConversionError", "convert_documents"]
